/**
 * `smarter-worker delayed release --queue Q` and `purge --queue Q` with thousands of countdowns parked on
 * RabbitMQ's delay levels: each of Q's is released exactly once (every task id once in Q), another queue's
 * stay parked even when they outnumber the walk's window, and a release stopped by Ctrl-C (SIGINT) mid-way
 * then run again leaves every countdown released once or still parked: nothing lost, nothing doubled.
 * Always with --queue: the levels are shared by every test on this broker.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { parkCountdowns } from '../../bench/park-countdowns.js';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { delayEntryExchange, delayRoutingKey } from '../../lib/broker/amqp/topology.js';
import { AMQP_URL, deleteQueues, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';

const exec = promisify(execFile);
// Parked for 17 days (level 20): the levels other tests watch (a 1 h countdown's level 11) are left alone.
const PARKED_S = 1_500_000;
const env = { ...process.env, CELERY_BROKER_URL: AMQP_URL, LOG_LEVEL: 'warn' };
const cli = async (...args: string[]) =>
  (await exec(process.execPath, ['--import', 'tsx', 'tasks/main.ts', 'delayed', ...args], { timeout: 300_000, env }))
    .stdout;

const queues: string[] = [];
async function freshQueues(...names: string[]): Promise<void> {
  queues.push(...names);
  await withChannel(async (ch) => {
    for (const q of names) await ch.assertQueue(q, { durable: true });
  });
}
afterAll(async () => {
  await deleteQueues(queues);
});

/** Every message in `queue`, taken: the task ids, in arrival order. */
async function drainIds(queue: string): Promise<string[]> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    await ch.prefetch(5000);
    const expected = (await ch.checkQueue(queue)).messageCount;
    const ids: string[] = [];
    if (expected === 0) return ids;
    await new Promise<void>((resolve) => {
      void ch.consume(queue, (m) => {
        if (!m) return;
        ids.push(String(m.properties.headers?.id));
        ch.ack(m);
        if (ids.length === expected) resolve();
      });
    });
    return ids;
  } finally {
    await conn.close().catch(() => undefined);
  }
}

const readyIn = (queue: string) => withChannel(async (ch) => (await ch.checkQueue(queue)).messageCount);

test("release --queue of 20,000 parked countdowns releases each once and leaves 13,000 of another queue parked (more than the walk's window holds)", async () => {
  const q = uniqueName('drel20k');
  const other = uniqueName('dother13k');
  await freshQueues(q, other);
  const otherIds = await parkCountdowns(AMQP_URL, other, 13_000, PARKED_S);
  const ids = await parkCountdowns(AMQP_URL, q, 20_000, PARKED_S);

  expect(await cli('release', '--queue', q)).toMatch(new RegExp(`^released 20000 delayed message\\(s\\) for ${q}`));
  const got = await drainIds(q);
  expect(got.length).toBe(20_000);
  expect(new Set(got)).toEqual(new Set(ids));
  // The other queue's are still parked, each once: a purge finds them all, and nothing of them reached it.
  expect(await cli('purge', '--queue', other)).toMatch(new RegExp(`^purged ${otherIds.length} delayed message`));
  expect(await readyIn(other)).toBe(0);
  expect(await cli('purge', '--queue', q)).toMatch(/^purged 0 delayed message/);
}, 600_000);

test('a release stopped by SIGINT mid-way, then run again, releases every countdown exactly once', async () => {
  const q = uniqueName('drelint');
  await freshQueues(q);
  const n = 40_000;
  const ids = await parkCountdowns(AMQP_URL, q, n, PARKED_S);

  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'tasks/main.ts', 'delayed', 'release', '--queue', q],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  child.stdout?.on('data', (b: Buffer) => (stdout += b.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  // Mid-way: some released, most not yet.
  await waitFor(async () => (await readyIn(q)) >= 1000, 120_000, 20);
  child.kill('SIGINT');
  const code = await exited;
  expect(code).toBe(130);
  const first = Number(/^released (\d+) delayed message\(s\).*stopped by Ctrl-C/.exec(stdout)?.[1]);
  expect(first).toBeGreaterThanOrEqual(1000);
  expect(first).toBeLessThan(n);
  // What it reports released is in the queue, no more (no copy without its original acked).
  expect(await readyIn(q)).toBe(first);

  const second = Number(/^released (\d+) delayed/.exec(await cli('release', '--queue', q))?.[1]);
  expect(first + second).toBe(n);
  const got = await drainIds(q);
  expect(got.length).toBe(n);
  expect(new Set(got)).toEqual(new Set(ids));
}, 600_000);

test('a task a worker parks again while its release runs (the released copy taken and given a new countdown) is left parked, not taken for its original', async () => {
  const q = uniqueName('dreparked');
  await freshQueues(q);
  const id = randomUUID();
  const conn = await amqp.connect(AMQP_URL);
  const park = async (seconds: number) => {
    const ch = await conn.createConfirmChannel();
    ch.publish(delayEntryExchange(seconds), delayRoutingKey(seconds, q), Buffer.from('[[], {}, {}]'), {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      deliveryMode: 2,
      correlationId: id,
      headers: { lang: 'py', task: 'test.add', id },
    });
    await ch.waitForConfirms();
    await ch.close();
  };
  try {
    await park(PARKED_S);
    const child = spawn(process.execPath, ['--import', 'tsx', 'tasks/main.ts', 'delayed', 'release', '--queue', q], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout?.on('data', (b: Buffer) => (stdout += b.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    // As a worker does once the released copy is in Q: parked again until its ETA, while the walk still runs.
    await waitFor(async () => (await readyIn(q)) === 1, 60_000, 20);
    await park(PARKED_S - 7);
    expect(await exited).toBe(0);
    expect(stdout).toMatch(new RegExp(`^released 1 delayed message\\(s\\) for ${q}`));
  } finally {
    await conn.close().catch(() => undefined);
  }
  expect(await drainIds(q)).toEqual([id]);
  expect(await cli('purge', '--queue', q)).toMatch(/^purged 1 delayed message/);
}, 120_000);
