/**
 * A `create_charge` batch that waits on a lock the test holds: with `innodb_lock_wait_timeout` 5 s, one attempt
 * of its tasks lasts about one lock timeout (not one per row on the pool's few connections), then each task
 * retries with Smarter's backoff; once the lock is released every charge is written exactly once; and with a
 * wait budget under the lock timeout, the batch's wait is reported in one line, not one per task. On the shared
 * MariaDB (a database of the test's own, dropped after) and RabbitMQ.
 */
import { randomUUID } from 'node:crypto';
import mysql from 'mysql2/promise';
import type { TaskMessage } from '../../lib/protocol/types.js';
import { noEvents, type TaskEvents } from '../../lib/worker/events.js';
import type { Database } from '../../tasks/db/database.js';
import { celeryMessage, deleteQueues, publishMany, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type Harness, startWorker } from '../support/harness.js';
import { type LogLine, recordingLogger } from '../support/logs.js';
import { seededDatabase, smarterTasksOn } from '../support/smarter-db.js';

const CREATE_CHARGE = 'smarter.apps.account.tasks.create_charge';
const LOCK_TIMEOUT_S = 5;
const TASKS = 32;
const world = seededDatabase('lockwait');

/** The worker's database, with every transaction waiting at most LOCK_TIMEOUT_S for a lock (as the server's setting would). */
function withLockTimeout(db: Database): Database {
  return {
    ...db,
    transaction: (fn, options) =>
      db.transaction(async (tx) => {
        await tx.execute(`SET SESSION innodb_lock_wait_timeout = ${LOCK_TIMEOUT_S}`);
        return fn(tx);
      }, options),
  };
}

let h: Harness | undefined;
afterAll(async () => {
  await h?.app.shutdown();
  if (h) await deleteQueues([h.queue, `${h.queue}.dead_letter`]);
});

test('own wiring: a create_charge batch behind a held lock: one attempt ≈ one lock timeout, one report, each charge written once after release', async () => {
  const started = new Map<string, number>();
  const firstAttemptMs: number[] = [];
  let succeeded = 0;
  const events: TaskEvents = {
    ...noEvents,
    started: (m: TaskMessage) => void (m.retries === 0 && started.set(m.id, Date.now())),
    retried: (m: TaskMessage) => {
      const t = started.get(m.id);
      if (m.retries === 0 && t !== undefined) firstAttemptMs.push(Date.now() - t);
    },
    succeeded: () => void succeeded++,
  };
  const lines: LogLine[] = [];
  const queue = uniqueName('q');
  h = await startWorker({
    queue,
    tasks: (q) => smarterTasksOn(q, `${q}_infra`),
    deps: { ...world.deps, db: withLockTimeout(world.db) },
    events,
    logger: recordingLogger(lines),
    env: { CELERY_WORKER_CONCURRENCY: String(TASKS), SMARTER_WORKER_WAIT_BUDGET: '2' },
  });

  // The test holds a lock every INSERT into account_charge waits on: the gap after its last row.
  const { poolSize: _pool, ...config } = world.database.config;
  const holder = await mysql.createConnection(config);
  const locator = `lock/${randomUUID()}`;
  try {
    await holder.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    await holder.beginTransaction();
    await holder.query('SELECT id FROM account_charge WHERE id >= 0 FOR UPDATE');
    const messages = Array.from({ length: TASKS }, (_, i) =>
      celeryMessage(CREATE_CHARGE, {
        resource_locator: locator,
        charge_type: 'completion',
        prompt_tokens: 1,
        completion_tokens: 1,
        total_tokens: 2,
        total_cost: `${i + 1}.5`,
      }),
    );
    await publishMany(queue, messages);
    // Every task's first attempt ends in a retry while the lock is held.
    await waitFor(() => firstAttemptMs.length === TASKS, 120_000, 50);
  } finally {
    await holder.rollback().catch(() => undefined);
    await holder.end();
  }
  await waitFor(() => succeeded === TASKS, 60_000, 100);
  const rows = await world.db.select(
    'SELECT COUNT(*) n, SUM(total_cost) total FROM account_charge WHERE resource_locator = ?',
    [locator],
  );
  const longest = Math.max(...firstAttemptMs);
  const reports = lines.filter((l) => l.meta.outcome === 'over-wait-budget');
  console.log(
    `lock timeout ${LOCK_TIMEOUT_S} s, ${TASKS} tasks: first attempt ${Math.min(...firstAttemptMs)}–${longest} ms, ` +
      `${reports.length} wait-budget report(s), ${rows[0]?.n} rows`,
  );
  // About one lock timeout: the batch's wait, not one more per row on the pool.
  expect(longest).toBeGreaterThanOrEqual(LOCK_TIMEOUT_S * 1000 - 500);
  expect(longest).toBeLessThan(LOCK_TIMEOUT_S * 1000 * 1.6);
  // 1.5 + 2.5 + … + 32.5, each once.
  expect(rows[0]).toEqual({ n: String(TASKS), total: `${(TASKS * (TASKS + 1)) / 2 + TASKS / 2}.00000000` });
  expect(reports).toHaveLength(1);
}, 180_000);
