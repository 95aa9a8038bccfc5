/**
 * MariaDB (a server of the test's own) stopped and started under a stream of create_charge: the charges that
 * meet the outage retry (Smarter's backoff) and then succeed, every row written once, exact sum. When the outage
 * outlasts the retries, each task ends FAILURE with its dead-letter copy, and `smarter-worker dead-letter replay`
 * brings every charge back. (spec/integration/db-outage.test.ts has the same end with revoked grants.)
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import type { AnyTask } from '../../lib/registry/define-task.js';
import { noEvents, type TaskEvents } from '../../lib/worker/events.js';
import { type Database, openDatabase } from '../../tasks/db/database.js';
import { Dec } from '../../tasks/db/decimal.js';
import { smarterTasks } from '../../tasks/index.js';
import { AMQP_URL, REDIS_URL, publishMany, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type Harness, startWorker } from '../support/harness.js';
import { type MariaNode, startMariaNode } from '../support/mariadb-node.js';
import { ResultReader } from '../support/results.js';
import { chargeMessages } from '../support/charge-messages.js';

const run = promisify(execFile);
let node: MariaNode;
const results = new ResultReader();

beforeAll(async () => {
  node = await startMariaNode();
}, 120_000);

afterAll(async () => {
  await results.close();
  await node.remove();
});

function counting(): TaskEvents & { n: Record<string, number> } {
  const n: Record<string, number> = { retried: 0, failed: 0, succeeded: 0 };
  return {
    ...noEvents,
    n,
    retried: () => void n.retried!++,
    failed: () => void n.failed!++,
    succeeded: () => void n.succeeded!++,
  };
}

const charges = (count: number, tag: string) => chargeMessages(count, { tag, resources: 7, wholeBelow: 97 });

async function withWorker(
  maxRetries: number,
  fn: (h: Harness, db: { name: string; worker: Database }, events: ReturnType<typeof counting>) => Promise<void>,
): Promise<void> {
  const name = await node.createDatabase(uniqueName('fault_db').replace(/[^A-Za-z0-9_]/g, '_'));
  const worker = openDatabase({ ...node.admin, database: name, poolSize: 8 });
  const events = counting();
  const queue = uniqueName('q');
  const tasks = (q: string) =>
    smarterTasks({
      operationalQueue: q,
      infrastructureQueue: `${q}_infra`,
      maxRetries,
      retryBackoff: true,
    }) as unknown as AnyTask[];
  const h = await startWorker({
    queue,
    tasks,
    events,
    deps: { db: worker },
    env: { CELERY_RESULT_BACKEND: REDIS_URL, CELERY_WORKER_CONCURRENCY: '16' },
  });
  try {
    await fn(h, { name, worker }, events);
  } finally {
    await h.stop();
    await worker.close();
  }
}

async function rows(name: string): Promise<{ n: number; total: string }> {
  const c = await mysql.createConnection({ ...node.admin, database: name });
  try {
    const [r] = await c.query('SELECT COUNT(*) n, COALESCE(SUM(total_cost), 0) total FROM account_charge');
    const row = (r as Array<{ n: number; total: string }>)[0];
    return { n: Number(row?.n ?? 0), total: String(row?.total ?? '0') };
  } finally {
    await c.end();
  }
}

/** The rows once there are at least `n` of them. */
async function rowsReach(name: string, n: number, timeoutMs: number): Promise<{ n: number; total: string }> {
  return waitFor(
    async () => {
      const r = await rows(name);
      return r.n >= n ? r : undefined;
    },
    timeoutMs,
    200,
  );
}

const sumOf = (cs: Array<{ cost: string }>) => cs.reduce((s, c) => s.add(Dec.of(c.cost)), Dec.zero()).toString();

test('own wiring: 1,000 create_charge streamed while MariaDB is stopped for 3 s and started: they retry, then 1,000 rows, exact sum, 0 failed', async () => {
  await withWorker(10, async (h, db, events) => {
    const all = charges(1000, 'restart');
    const producer = (async () => {
      for (let b = 0; b < 20; b++) {
        await publishMany(h.queue, all.slice(b * 50, b * 50 + 50));
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    await waitFor(async () => (await rows(db.name)).n >= 100, 30_000, 50);
    await node.stop();
    await new Promise((r) => setTimeout(r, 3000));
    await node.start();
    await producer;
    const end = await rowsReach(db.name, all.length, 150_000);
    await new Promise((r) => setTimeout(r, 500));
    const final = await rows(db.name);
    for (const c of all) expect((await results.ready(c.id, 30_000)).status).toBe('SUCCESS');
    process.stdout.write(
      `mariadb restart: published ${all.length}, retries ${events.n.retried}, succeeded ${events.n.succeeded}, failed ${events.n.failed}, rows ${final.n}\n`,
    );
    expect(events.n.retried).toBeGreaterThan(0);
    expect(events.n.failed).toBe(0);
    expect(end.n).toBe(all.length);
    expect(final.n).toBe(all.length);
    expect(Dec.of(final.total).toString()).toBe(sumOf(all));
  });
}, 240_000);

test('own wiring: 100 create_charge while MariaDB is down past their 2 retries: 100 FAILURE, 100 dead-lettered; started again and replayed: 100 rows, exact sum', async () => {
  await withWorker(2, async (h, db, events) => {
    const all = charges(100, 'exhausted');
    await node.stop();
    try {
      await publishMany(h.queue, all);
      for (const c of all) expect((await results.ready(c.id, 60_000)).status).toBe('FAILURE');
      const dlq = `${h.queue}.dead_letter`;
      const dead = await waitFor(async () => {
        const n = await withChannel(async (ch) => (await ch.checkQueue(dlq)).messageCount);
        return n >= all.length ? n : undefined;
      }, 15_000);
      expect(dead).toBe(all.length);
    } finally {
      await node.start();
    }
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'tasks/main.ts', 'dead-letter', 'replay', h.queue],
      { env: { ...process.env, CELERY_BROKER_URL: AMQP_URL } },
    );
    expect(stdout).toContain(`replayed ${all.length} message(s) from ${h.queue}.dead_letter`);
    const final = await rowsReach(db.name, all.length, 60_000);
    for (const c of all) await waitFor(async () => (await results.meta(c.id))?.status === 'SUCCESS', 30_000);
    process.stdout.write(
      `mariadb down past the retries: published ${all.length}, retries ${events.n.retried}, failed ${events.n.failed}, replayed ${all.length}, rows ${final.n}\n`,
    );
    expect(final.n).toBe(all.length);
    expect(Dec.of(final.total).toString()).toBe(sumOf(all));
  });
}, 240_000);
