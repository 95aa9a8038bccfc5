/**
 * Nothing lost when the database is down: the worker's database user loses its grants (a dedicated user
 * with grants on its own test database only), 100 create_charge exhaust their retries, all end FAILURE and
 * all 100 are in the dead-letter queue; once the grants are back, a replay writes the 100 rows, exact sum.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import type { AnyTask } from '../../lib/registry/define-task.js';
import { type Database, openDatabase } from '../../tasks/db/database.js';
import { Dec } from '../../tasks/db/decimal.js';
import { AMQP_URL, REDIS_URL, deleteQueues, publishMany, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { MYSQL, type TestDatabase, createTestDatabase } from '../support/db.js';
import { type Harness, startWorker } from '../support/harness.js';
import { ResultReader } from '../support/results.js';
import { chargeMessages } from '../support/charge-messages.js';
import { smarterTasksOn } from '../support/smarter-db.js';

const run = promisify(execFile);
const { poolSize: _pool, ...ADMIN } = MYSQL;

let t: TestDatabase;
let admin: mysql.Connection;
let workerDb: Database;
let h: Harness | undefined;
const user = uniqueName('swout')
  .replace(/[^A-Za-z0-9_]/g, '_')
  .slice(0, 32);
const password = randomUUID();
const hosts = ['127.0.0.1', 'localhost'];

async function grant(on: boolean): Promise<void> {
  for (const host of hosts) {
    await admin.query(
      on ? `GRANT ALL PRIVILEGES ON \`${t.name}\`.* TO ?@?` : `REVOKE ALL PRIVILEGES ON \`${t.name}\`.* FROM ?@?`,
      [user, host],
    );
  }
  if (!on) {
    // A database grant is checked when a connection selects the database: end the user's open connections.
    const [rows] = await admin.query('SELECT id FROM information_schema.processlist WHERE user = ?', [user]);
    for (const r of rows as Array<{ id: number }>) await admin.query(`KILL ${Number(r.id)}`).catch(() => undefined);
  }
}

beforeAll(async () => {
  t = await createTestDatabase('outage');
  admin = await mysql.createConnection(ADMIN);
  for (const host of hosts) await admin.query('CREATE USER ?@? IDENTIFIED BY ?', [user, host, password]);
  await grant(true);
  workerDb = openDatabase({ ...MYSQL, database: t.name, user, password, poolSize: 8 });
});

afterAll(async () => {
  await h?.app.shutdown();
  if (h) await deleteQueues([h.queue, `${h.queue}.dead_letter`]);
  await workerDb.close();
  for (const host of hosts) await admin.query('DROP USER IF EXISTS ?@?', [user, host]);
  await admin.end();
  await t.drop();
});

test('own wiring: 100 create_charge during an outage: all FAILURE, all 100 in the dead-letter queue; after a replay, 100 rows and the exact sum', async () => {
  const queue = uniqueName('q');
  const tasks = (q: string) => smarterTasksOn(q, `${q}_infra`) as unknown as AnyTask[];
  h = await startWorker({
    queue,
    tasks,
    deps: { db: workerDb },
    env: { CELERY_RESULT_BACKEND: REDIS_URL, CELERY_WORKER_CONCURRENCY: '16' },
  });
  const results = new ResultReader();
  try {
    await grant(false);
    const charges = chargeMessages(100, { tag: 'outage', resources: 7, wholeBelow: 100 });
    await publishMany(queue, charges);
    for (const c of charges) {
      const meta = await results.ready(c.id, 60_000);
      expect(meta.status).toBe('FAILURE');
      if (process.env.TEST_LOG && c === charges[0]) process.stdout.write(`${JSON.stringify(meta.result)}\n`);
      expect(meta.result).toMatchObject({ exc_type: expect.stringMatching(/Error/) as unknown });
    }
    const dlq = `${queue}.dead_letter`;
    const dead = await waitFor(async () => {
      const n = await withChannel(async (ch) => (await ch.checkQueue(dlq)).messageCount);
      return n >= 100 ? n : undefined;
    }, 15_000);
    expect(dead).toBe(100);
    expect(
      (await workerDb.select('SELECT COUNT(*) n FROM account_charge').catch(() => [{ n: 'unreachable' }]))[0]?.n,
    ).toBe('unreachable');

    await grant(true);
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'tasks/main.ts', 'dead-letter', 'replay', queue],
      {
        env: { ...process.env, CELERY_BROKER_URL: AMQP_URL },
      },
    );
    expect(stdout).toContain(`replayed 100 message(s) from ${dlq} (100 to ${queue})`);
    const rows = await waitFor(async () => {
      const r = await t.db.select('SELECT COUNT(*) n, SUM(total_cost) total FROM account_charge');
      return Number(r[0]?.n) === 100 ? r[0] : undefined;
    }, 30_000);
    const expected = charges.reduce((sum, c) => sum.add(Dec.of(c.cost)), Dec.zero());
    expect(Dec.of(String(rows.total)).toString()).toBe(expected.toString());
    for (const c of charges) await waitFor(async () => (await results.meta(c.id))?.status === 'SUCCESS');
    await waitFor(async () => (await withChannel(async (ch) => (await ch.checkQueue(dlq)).messageCount)) === 0);
  } finally {
    await results.close();
  }
}, 180_000);
