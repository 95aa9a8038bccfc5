/**
 * Header values from real Python Celery (py-amqp) over real RabbitMQ. An integer
 * beyond 32 bits (py-amqp's field type `L`) is read, and the worker stays connected; a dead-letter copy
 * carries its headers as they came (a float stays a float, as Python reads it back). An ETA beyond
 * the delay topology's range is dead-lettered with a reason that says so, not held unacked.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { AMQP_URL, REDIS_URL, deleteQueues, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type Harness, startWorker } from '../support/harness.js';
import { recordingLogger } from '../support/logs.js';
import { ResultReader } from '../support/results.js';
import { pythonJson } from '../support/python-script.js';

const run = promisify(execFile);

async function probe(queue: string, command: string, arg?: unknown): Promise<unknown> {
  const args = [AMQP_URL, queue, command, ...(arg === undefined ? [] : [JSON.stringify(arg)])];
  return pythonJson('spec/interop/python/probe.py', args, { timeoutMs: 60_000 });
}

/** Sends, with kombu, a task this worker does not register, so that it is dead-lettered, with `headers`: its id. */
async function sendUnregistered(headers: Record<string, unknown>): Promise<string> {
  const id = randomUUID();
  await probe(h.queue, 'send', { task: 'test.not_registered_here', args: [], id, headers });
  return id;
}

let h: Harness;
let results: ResultReader;
let disconnects = 0;
const logs = recordingLogger();
beforeAll(async () => {
  h = await startWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL }, logger: logs });
  h.broker.on('disconnected', () => disconnects++);
  results = new ResultReader();
});
afterAll(async () => {
  await h.stop();
  await results.close();
});

test('own wiring: a Python header beyond 32 bits (py-amqp type L) is read: the task runs and the connection stays up', async () => {
  const id = randomUUID();
  await probe(h.queue, 'send', {
    task: 'test.add',
    args: [1, 2],
    id,
    headers: { ts_ms: 1733000000000, neg: -1733000000000, min32: -2147483648, huge: 2 ** 62 },
  });
  expect(await results.ready(id)).toMatchObject({ status: 'SUCCESS', result: 3 });
  expect(disconnects).toBe(0);
  expect(h.broker.connected).toBe(true);
});

test('own wiring: the same message waiting in the queue before the worker starts does not stop the start', async () => {
  const queue = uniqueName('q');
  const id = randomUUID();
  // kombu declares the queue as Celery does, and the message waits there.
  await probe(queue, 'send', { task: 'test.add', args: [2, 2], id, headers: { ts_ms: 1733000000000 } });
  try {
    const early = await startWorker({ queue, env: { CELERY_RESULT_BACKEND: REDIS_URL } });
    try {
      expect(await results.ready(id)).toMatchObject({ status: 'SUCCESS', result: 4 });
      expect(early.broker.connected).toBe(true);
    } finally {
      await early.app.shutdown();
    }
  } finally {
    await deleteQueues([queue, `${queue}.dead_letter`]);
  }
});

test('own wiring: a dead-letter copy keeps its headers as they came: floats stay floats, 64-bit integers stay integers', async () => {
  const id = await sendUnregistered({
    big_float: { float: '1e20' },
    whole_float: { float: '3' },
    ts_ms: 1733000000000,
    small: 7,
    text: 'é',
  });
  expect(await results.ready(id)).toMatchObject({ status: 'FAILURE', result: { exc_type: 'NotRegistered' } });
  const copies = (await probe(h.queue, 'dead-letters')) as Array<Record<string, { type: string; repr: string }>>;
  expect(copies).toHaveLength(1);
  expect(copies[0]).toMatchObject({
    big_float: { type: 'float', repr: '1e+20' },
    whole_float: { type: 'float', repr: '3.0' },
    ts_ms: { type: 'int', repr: '1733000000000' },
    small: { type: 'int', repr: '7' },
    text: { type: 'str', repr: "'é'" },
    id: { type: 'str', repr: `'${id}'` },
  });
  expect(disconnects).toBe(0);
});

test("own wiring: an ETA beyond the delay topology's range (year 9999) is dead-lettered with a reason that says so", async () => {
  const id = randomUUID();
  await probe(h.queue, 'send', { task: 'test.add', args: [1, 1], id, eta: '9999-01-01T00:00:00+00:00' });
  await waitFor(() => logs.lines.some((l) => l.message.includes(`refused test.add[${id}]`)), 15_000);
  const copies = (await probe(h.queue, 'dead-letters')) as Array<Record<string, { type: string; repr: string }>>;
  const copy = copies.find((c) => c.id?.repr === `'${id}'`);
  expect(copy?.['x-dead-letter-reason']?.repr).toMatch(
    /eta 9999-01-01.* beyond the delay topology's range of 268435455 s/,
  );
  expect(h.worker.heldCount).toBe(0);
  expect(await unacked(h.queue)).toBe(0);
  expect(await results.meta(id)).toBeUndefined();
});

async function unacked(queue: string): Promise<number> {
  const { stdout } = await run('rabbitmqctl', [
    'list_queues',
    '-q',
    'name',
    'messages_unacknowledged',
    'messages_ready',
  ]);
  const row = stdout
    .split('\n')
    .map((l) => l.split('\t'))
    .find((r) => r[0] === queue);
  return Number(row?.[1] ?? -1);
}

test('own wiring: a dead-letter copy that cannot be made: bounded retries with backoff, then left unacked and reported once', async () => {
  // A header larger than amqplib's 64 KiB encoding buffer: the worker reads it, but no copy can be encoded.
  const id = await sendUnregistered({ blob: { repeat: ['x', 70_000] } });
  await waitFor(() => h.worker.deadLetters.unsent === 1, 40_000, 100);
  await sleep(1500);
  expect(h.worker.deadLetters.failedAttempts).toBe(5);
  expect(h.worker.deadLetters.unsent).toBe(1);
  const loud = logs.lines.filter((l) => l.level === 'error' && l.message.includes(`could not copy message ${id}`));
  expect(loud).toHaveLength(1);
  expect(loud[0]?.message).toMatch(/after 5 attempt\(s\).*left unacked/);
  // Not lost, not spinning: it waits unacked on the worker's channel.
  expect(await unacked(h.queue)).toBe(1);
  expect(h.broker.connected).toBe(true);
}, 60_000);
