/**
 * Effects written once per task id. With late ack a message whose run committed is redelivered when the worker
 * dies before its ack reaches the broker; a task whose effect must not happen twice (a charge bills a customer)
 * writes, in the same transaction as its effect, a marker `(task id, effect)` into the worker's own table
 * `smarter_worker_task_effect`. A redelivered run (or a retry: Celery keeps the task id) finds the marker and
 * writes nothing. The marker's primary key also orders two runs of one task id that overlap (a redelivery while
 * the first run still holds its transaction): the second waits for the first's commit, then finds its marker.
 *
 * The table is not Smarter's: the worker creates it itself, on the first use of each database (and the
 * first-run bootstrap creates it with Smarter's tables). Markers older than `MARKER_RETENTION_DAYS` are removed:
 * no broker redelivers a message that late (RabbitMQ's consumer timeout and Redis's visibility timeout are hours).
 */
import { randomBytes } from 'node:crypto';
import type { Database, Queryable } from './database.js';
import { str } from './columns.js';
import { NOW } from './django.js';

export const ONCE_TABLE = 'smarter_worker_task_effect';
export const MARKER_RETENTION_DAYS = 14;

/**
 * `effect` tells apart the effects of one task (e.g. the resources one run charges); `claim` is the transaction
 * that wrote the marker, so that a group commit learns which of its markers are its own. No column has a
 * DEFAULT, as in Smarter's tables (tasks/db/schema.sql): every INSERT names them all.
 */
export const ONCE_TABLE_DDL = `CREATE TABLE IF NOT EXISTS ${ONCE_TABLE} (
  task_id VARCHAR(255) NOT NULL,
  effect VARCHAR(255) NOT NULL,
  task_name VARCHAR(255) NOT NULL,
  claim CHAR(32) NOT NULL,
  done_at DATETIME(6) NOT NULL,
  PRIMARY KEY (task_id, effect),
  KEY (claim),
  KEY (done_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;

export interface EffectKey {
  taskId: string;
  taskName: string;
  /** Which of the task's effects; '' when it has one. */
  effect?: string;
}

const ready = new WeakMap<Queryable, Promise<void>>();
const pruned = new WeakMap<Queryable, number>();
const PRUNE_EVERY_MS = 3_600_000;

/** DDL commits implicitly in MariaDB, so the table is made outside any transaction, once per database. */
export function ensureOnceTable(db: Queryable): Promise<void> {
  let p = ready.get(db);
  if (!p) {
    p = db.execute(ONCE_TABLE_DDL).then(
      () => undefined,
      (err: unknown) => {
        // Not remembered: a database that is down now is tried again by the next task.
        ready.delete(db);
        throw err;
      },
    );
    ready.set(db, p);
  }
  return p;
}

async function prune(db: Database): Promise<void> {
  const now = Date.now();
  if (now - (pruned.get(db) ?? 0) < PRUNE_EVERY_MS) return;
  pruned.set(db, now);
  // Bounded, so that a first prune after a long time never holds a long lock; what is left goes next hour.
  await db
    .execute(`DELETE FROM ${ONCE_TABLE} WHERE done_at < ${NOW} - INTERVAL ? DAY LIMIT 10000`, [MARKER_RETENTION_DAYS])
    .catch(() => undefined);
}

/**
 * Inside `tx`: claims the keys that have no marker yet and returns, for each key, whether it is claimed now
 * (write its effect in `tx`) or was marked before (its effect is committed already: write nothing).
 */
export async function claimEffects(tx: Queryable, keys: readonly EffectKey[]): Promise<boolean[]> {
  if (keys.length === 0) return [];
  const claim = randomBytes(16).toString('hex');
  const rows = keys.map((k) => [k.taskId, k.effect ?? '', k.taskName, claim]);
  await tx.execute(
    `INSERT IGNORE INTO ${ONCE_TABLE} (task_id, effect, task_name, claim, done_at) VALUES ${rows.map(() => `(?, ?, ?, ?, ${NOW})`).join(', ')}`,
    rows.flat(),
  );
  const mine = await tx.select(`SELECT task_id, effect FROM ${ONCE_TABLE} WHERE claim = ?`, [claim]);
  const claimed = new Set(mine.map((r) => `${str(r.task_id)}\n${str(r.effect)}`));
  // One key given twice is claimed by its first occurrence only.
  const seen = new Set<string>();
  return keys.map((k) => {
    const id = `${k.taskId}\n${k.effect ?? ''}`;
    const first = !seen.has(id);
    seen.add(id);
    return first && claimed.has(id);
  });
}

/**
 * Runs `write` for the items whose key has no marker, with their markers, in one transaction; returns for each
 * item whether it was written now (false: a run of the same task id had committed it).
 */
export async function writeOnce<I>(
  db: Database,
  items: readonly I[],
  keyOf: (item: I) => EffectKey,
  write: (tx: Queryable, fresh: I[]) => Promise<void>,
): Promise<boolean[]> {
  await ensureOnceTable(db);
  const fresh = await db.transaction(
    async (tx) => {
      const claimed = await claimEffects(tx, items.map(keyOf));
      const todo = items.filter((_item, i) => claimed[i]);
      if (todo.length > 0) await write(tx, todo);
      return claimed;
    },
    { isolation: 'READ COMMITTED' },
  );
  void prune(db);
  return fresh;
}

/** One effect: `write` and its marker in one transaction, unless a run of the same task id committed it. */
export async function once(db: Database, key: EffectKey, write: (tx: Queryable) => Promise<void>): Promise<boolean> {
  const [fresh] = await writeOnce(
    db,
    [key],
    (k) => k,
    (tx) => write(tx),
  );
  return fresh === true;
}
