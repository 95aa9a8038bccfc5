/**
 * Charges written once under crashes: the worker (tasks/main.ts, late ack) is SIGKILLed five times while it works
 * through 2,000 create_charge (smarter/apps/account/tasks.py), and again (up to ten in all) until a kill has hit
 * what the test is for. Each kill returns its unacked messages to the queue, among them charges already committed
 * whose ack died with the process; their redelivered runs find their marker (tasks/db/once.ts) and write nothing:
 * exactly 2,000 rows and the exact sum.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { Dec } from '../../tasks/db/decimal.js';
import { ONCE_TABLE } from '../../tasks/db/once.js';
import { AMQP_URL, deleteQueues, publishMany, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type TestDatabase, createTestDatabase } from '../support/db.js';
import { chargeMessages } from '../support/charge-messages.js';

const N = 2000;
const KILLS = 5;
/** Kills past `KILLS` while none has yet hit a committed charge whose ack was unsent (the case this test is for). */
const KILLS_AT_MOST = 10;
const children: ChildProcess[] = [];
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase('chkill');
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await t.drop();
});

function spawnWorker(queue: string): ChildProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'tasks/main.ts', '-Q', queue, '-c', '16', '-l', 'warning', '--without-mingle'],
    {
      env: {
        ...process.env,
        CELERY_BROKER_URL: AMQP_URL,
        CELERY_RESULT_BACKEND: '',
        CELERY_TASK_ACKS_LATE: '1',
        SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE: queue,
        SMARTER_MYSQL_HOST: t.config.host,
        SMARTER_MYSQL_PORT: String(t.config.port),
        SMARTER_MYSQL_USER: t.config.user,
        SMARTER_MYSQL_PASSWORD: t.config.password,
        SMARTER_MYSQL_DATABASE: t.name,
      },
      stdio: 'ignore',
    },
  );
  children.push(child);
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

const rowCount = async () => Number((await t.db.select('SELECT COUNT(*) n FROM account_charge'))[0]?.n);
const queueState = (queue: string) => withChannel(async (ch) => ch.checkQueue(queue));

test(`SIGKILL of a late-ack worker ${KILLS} to ${KILLS_AT_MOST} times during ${N} create_charge: exactly ${N} rows, the exact sum, ${N} markers`, async () => {
  const queue = uniqueName('chkill');
  const charges = chargeMessages(N, { tag: 'kill', resources: 11, wholeBelow: 89 });
  let child = spawnWorker(queue);
  let redelivered = 0;
  try {
    await waitFor(async () => (await queueState(queue).catch(() => undefined))?.consumerCount === 1, 60_000, 100);
    await publishMany(queue, charges);
    let kills = 0;
    for (let k = 1; k <= KILLS || (redelivered === 0 && k <= KILLS_AT_MOST); k++) {
      kills = k;
      // Killed while it writes: right after a commit, with that batch's acks possibly still unsent.
      await waitFor(async () => (await rowCount()) >= Math.floor((k * N) / (KILLS_AT_MOST + 1)), 120_000, 5);
      await kill(child);
      // The broker requeues the dead connection's unacked messages; committed + waiting > N counts the committed
      // charges whose ack was lost, which the next worker receives again.
      const { messageCount, consumerCount } = await waitFor(async () => {
        const s = await queueState(queue);
        return s.consumerCount === 0 ? s : undefined;
      }, 30_000);
      expect(consumerCount).toBe(0);
      const rows = await rowCount();
      redelivered += Math.max(0, rows + messageCount - N);
      child = spawnWorker(queue);
    }
    const done = await waitFor(
      async () => {
        const n = await rowCount();
        const s = await queueState(queue);
        return n >= N && s.messageCount === 0 ? n : undefined;
      },
      180_000,
      200,
    );
    // A little longer, for a second row that would come late.
    await new Promise((r) => setTimeout(r, 2000));
    const r = await t.db.select('SELECT COUNT(*) n, SUM(total_cost) total FROM account_charge');
    const markers = await t.db.select(`SELECT COUNT(*) n FROM ${ONCE_TABLE}`);
    const expected = charges.reduce((s, c) => s.add(Dec.of(c.cost)), Dec.zero());
    process.stdout.write(
      `charge-once: ${N} create_charge, ${kills} SIGKILLs, ${redelivered} committed charges redelivered after a kill, rows ${String(r[0]?.n)}, markers ${String(markers[0]?.n)}\n`,
    );
    expect(done).toBe(N);
    expect(Number(r[0]?.n)).toBe(N);
    expect(Dec.of(String(r[0]?.total)).toString()).toBe(expected.toString());
    expect(Number(markers[0]?.n)).toBe(N);
    // The kills did hit committed-but-unacked charges: without the markers those would be second rows.
    expect(redelivered).toBeGreaterThan(0);
  } finally {
    await kill(child).catch(() => undefined);
    await deleteQueues([queue, `${queue}.dead_letter`]);
  }
}, 420_000);
