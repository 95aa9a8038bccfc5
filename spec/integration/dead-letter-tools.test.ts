/**
 * `smarter-worker dead-letter list` and `replay` against the real broker: 200 poisoned messages of three
 * kinds are counted right and left as they were; `replay --task` moves exactly that task's messages back
 * and they run; a message whose queue is gone stays; a replay killed midway loses nothing.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type amqp from 'amqplib';
import * as z from 'zod';
import { AmqpBroker } from '../../lib/broker/amqp/amqp-broker.js';
import { listDeadLetters } from '../../lib/deadletter/tools.js';
import { nullLogger } from '../../lib/logger.js';
import { defineTask } from '../../lib/registry/define-task.js';
import { AMQP_URL, REDIS_URL, deleteQueues, publishMany, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { startWorker } from '../support/harness.js';
import { ResultReader } from '../support/results.js';
import { testTasks } from '../support/test-tasks.js';

const run = promisify(execFile);
const CLI = [process.execPath, '--import', 'tsx', 'tasks/main.ts'] as const;
const cliEnv = { ...process.env, CELERY_BROKER_URL: AMQP_URL };

function cli(...args: string[]): Promise<{ stdout: string }> {
  const [node, ...pre] = CLI;
  return run(node, [...pre, ...args], { env: cliEnv, timeout: 60_000 });
}

const count = (q: string) => withChannel(async (ch) => (await ch.checkQueue(q)).messageCount);

/** Every message of a queue, in order, left in place (got unacked; the channel's close returns them). */
const peek = (q: string) =>
  withChannel(async (ch) => {
    const ids: string[] = [];
    for (let m = await ch.get(q); m !== false; m = await ch.get(q)) ids.push(String(m.properties.correlationId));
    return ids;
  });

/**
 * Every message a queue holds ready when asked, taken. Streamed by one consumer: a `basic.get` each is a round
 * trip per message, and ten thousand of them on a loaded broker took most of a test's time.
 */
const drain = (q: string) =>
  withChannel(async (ch) => {
    const ids: string[] = [];
    const want = (await ch.checkQueue(q)).messageCount;
    if (want === 0) return ids;
    const { consumerTag } = await ch.consume(
      q,
      (m) => {
        if (m === null) return;
        ids.push(String(m.properties.correlationId));
      },
      { noAck: true },
    );
    await waitFor(() => ids.length >= want, 60_000, { stepMs: 20, what: () => `${ids.length} of ${want} from ${q}` });
    // Whatever was delivered before the cancel's reply is in `ids`: taken without an ack, none may be dropped.
    await ch.cancel(consumerTag);
    return ids;
  });

function taskMessage(task: string, args: unknown[], over: Partial<amqp.Options.Publish> = {}, body?: string) {
  const id = randomUUID();
  return {
    id,
    body: body ?? JSON.stringify([args, {}, {}]),
    options: {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      correlationId: id,
      headers: { lang: 'py', task, id, root_id: id, retries: 0 },
      ...over,
    },
  };
}

const ported = (queue: string) =>
  defineTask({ name: 'test.ported', queue, params: z.object({ x: z.number() }), run: ({ x }) => x * 2 });

describe('own wiring: 200 poisoned messages of three kinds', () => {
  const queue = uniqueName('q');
  const dlq = `${queue}.dead_letter`;
  let results: ResultReader;
  const portedIds: string[] = [];

  beforeAll(async () => {
    results = new ResultReader();
    // A worker that does not implement test.ported yet: all three kinds end in the dead-letter queue.
    const before = await startWorker({ queue });
    const messages = [];
    for (let i = 0; i < 200; i++) {
      if (i % 2 === 0) {
        const m = taskMessage('test.ported', [i]);
        portedIds.push(m.id);
        messages.push(m);
      } else if (i % 4 === 1) {
        messages.push(taskMessage('test.add', [], {}, '{not json'));
      } else {
        messages.push(
          taskMessage(
            'test.echo',
            [1],
            { contentType: 'application/x-python-serialize', contentEncoding: 'binary' },
            'cos\nsystem\n',
          ),
        );
      }
    }
    await publishMany(queue, messages);
    await waitFor(async () => (await count(dlq)) === 200, 30_000);
    await before.app.shutdown();
  }, 60_000);

  afterAll(async () => {
    await results.close();
    await deleteQueues([queue, dlq]);
  });

  test('list counts them by reason and by task, and leaves every message where it was', async () => {
    const order = await peek(dlq);
    expect(order).toHaveLength(200);
    const broker = new AmqpBroker({ url: AMQP_URL, logger: nullLogger() });
    await broker.connect();
    const s = await listDeadLetters(broker, dlq).finally(() => broker.close());
    expect(s.total).toBe(200);
    expect(Object.fromEntries(s.byTask)).toEqual({ 'test.ported': 100, 'test.add': 50, 'test.echo': 50 });
    expect([...s.byReason.values()].sort((a, b) => a - b)).toEqual([50, 50, 100]);
    expect(s.byReason.get('task "test.ported" is not registered')).toBe(100);
    expect(s.oldest).not.toBeNull();
    expect(s.oldest! <= s.newest! && s.newest! <= Date.now()).toBe(true);

    const { stdout } = await cli('dead-letter', 'list', queue);
    if (process.env.TEST_LOG) process.stdout.write(stdout);
    expect(stdout).toContain(`${dlq}: 200 message(s); oldest `);
    expect(stdout).toMatch(/^ +100 {2}test\.ported$/m);
    expect(stdout).toMatch(/^ +100 {2}task "test\.ported" is not registered$/m);
    expect(await peek(dlq)).toEqual(order);
  }, 60_000);

  test("replay --task moves exactly that task's messages back to their queue, and they run", async () => {
    const after = await startWorker({
      queue,
      env: { CELERY_RESULT_BACKEND: REDIS_URL },
      tasks: (q) => [...testTasks(q), ported(q)],
    });
    try {
      const { stdout } = await cli('dead-letter', 'replay', dlq, '--task', 'test.ported');
      expect(stdout).toContain(`replayed 100 message(s) from ${dlq} (100 to ${queue}); 100 not chosen left in place`);
      for (const [i, id] of portedIds.entries()) {
        expect(await results.ready(id)).toMatchObject({ status: 'SUCCESS', result: i * 4 });
      }
      const left = new AmqpBroker({ url: AMQP_URL, logger: nullLogger() });
      await left.connect();
      const s = await listDeadLetters(left, dlq).finally(() => left.close());
      expect(Object.fromEntries(s.byTask)).toEqual({ 'test.add': 50, 'test.echo': 50 });
    } finally {
      await after.app.shutdown();
    }
  }, 90_000);
});

test('own wiring: a message whose original queue no longer exists stays in the dead-letter queue', async () => {
  const dlq = uniqueName('gone') + '.dead_letter';
  const m = taskMessage('test.add', [1, 2]);
  m.options.headers = {
    ...(m.options.headers as Record<string, unknown>),
    'x-dead-letter-reason': 'test',
    'x-original-queue': uniqueName('deleted'),
  };
  await withChannel((ch) => ch.assertQueue(dlq, { durable: true }));
  try {
    await publishMany(dlq, [m]);
    const { stdout } = await cli('dead-letter', 'replay', dlq);
    expect(stdout).toContain('replayed 0 message(s)');
    expect(stdout).toMatch(/left in place: 1 message\(s\): queue deleted_\w+ does not exist/);
    expect(await peek(dlq)).toEqual([m.id]);
  } finally {
    await deleteQueues([dlq]);
  }
}, 60_000);

test('own wiring: SIGKILL of a replay midway loses no message and duplicates at most the one in flight', async () => {
  const target = uniqueName('q');
  const dlq = `${target}.dead_letter`;
  const N = 10_000;
  const messages = Array.from({ length: N }, (_v, i) => {
    const m = taskMessage('test.add', [i, 1]);
    m.options.headers = {
      ...(m.options.headers as Record<string, unknown>),
      'x-dead-letter-reason': 'test',
      'x-original-queue': target,
      'x-dead-lettered-at': new Date().toISOString(),
    };
    return m;
  });
  await withChannel(async (ch) => {
    await ch.assertQueue(target, { durable: true });
    await ch.assertQueue(dlq, { durable: true });
  });
  let replay: ChildProcess | undefined;
  try {
    await publishMany(dlq, messages);
    const [node, ...pre] = CLI;
    const child = spawn(node, [...pre, 'dead-letter', 'replay', target], { env: cliEnv, stdio: 'ignore' });
    replay = child;
    // Listened for from the start: a replay that ended by itself before the kill must fail the wait, not hang it.
    const exited = new Promise<string>((r) => child.once('exit', (code, signal) => r(signal ?? `code ${code}`)));
    // One channel polled tightly, so the kill lands while the replay is still going.
    await withChannel(async (ch) => {
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`the replay ended by itself (code ${child.exitCode})`);
          return (await ch.checkQueue(target)).messageCount >= 200;
        },
        60_000,
        2,
      );
      child.kill('SIGKILL');
    });
    expect(await exited).toBe('SIGKILL');
    const replayed = await drain(target);
    // What the replay held unacked comes back as RabbitMQ closes its connection; what one look finds is kept.
    const stayed: string[] = [];
    await waitFor(
      async () => {
        stayed.push(...(await drain(dlq)));
        return stayed.length + replayed.length >= N;
      },
      15_000,
      { what: () => `${replayed.length} replayed and ${stayed.length} left of ${N}` },
    );
    // Killed midway: some replayed, some not.
    expect(replayed.length).toBeLessThan(N);
    const all = [...replayed, ...stayed];
    expect(new Set(all)).toEqual(new Set(messages.map((m) => m.id)));
    expect(all.length - N).toBeLessThanOrEqual(1);
  } finally {
    if (replay && replay.exitCode === null && replay.signalCode === null) replay.kill('SIGKILL');
    await deleteQueues([target, dlq]);
  }
}, 120_000);
