/**
 * Bad input against the real worker on real RabbitMQ: each case ends with one clear outcome, a dead-letter
 * copy where Celery would have dropped the message, and a worker that goes on serving the next task.
 */
import { randomUUID } from 'node:crypto';
import { publishRaw as publishRawTo, withChannel } from '../support/amqp.js';
import { type Harness, workerForFile } from '../support/harness.js';
import type { ResultReader } from '../support/results.js';

let h: Harness;
let results: ResultReader;
workerForFile({ CELERY_TASK_TIME_LIMIT: '5' }, (w) => ({ h, results } = w));

const v2headers = (task: string, id: string) => ({ task, id, lang: 'py', retries: 0, root_id: id });

const publishRaw = (body: string | Buffer, options: Record<string, unknown>) => publishRawTo(h.queue, body, options);

async function publishTask(task: string, args: unknown[], kwargs: Record<string, unknown> = {}): Promise<string> {
  const id = randomUUID();
  await publishRaw(JSON.stringify([args, kwargs, {}]), {
    contentType: 'application/json',
    contentEncoding: 'utf-8',
    correlationId: id,
    headers: v2headers(task, id),
  });
  return id;
}

/** The dead-letter copies of messages with these correlation ids, read without leaving them consumed. */
async function deadLetters(): Promise<Array<{ id: string | undefined; reason: unknown }>> {
  return withChannel(async (ch) => {
    const out: Array<{ id: string | undefined; reason: unknown }> = [];
    for (;;) {
      const m = await ch.get(`${h.queue}.dead_letter`, { noAck: false });
      if (m === false) break;
      out.push({
        id: m.properties.correlationId as string | undefined,
        reason: m.properties.headers?.['x-dead-letter-reason'],
      });
    }
    ch.nackAll(true);
    return out;
  });
}

async function stillServes(): Promise<void> {
  const id = await publishTask('test.add', [20, 22]);
  expect((await results.ready(id)).result).toBe(42);
}

test('own wiring: an undecodable body is acked, copied to the dead-letter queue, and the worker goes on', async () => {
  const id = randomUUID();
  await publishRaw('[[1, 2', {
    contentType: 'application/json',
    correlationId: id,
    headers: v2headers('test.add', id),
  });
  await stillServes();
  const dl = await deadLetters();
  expect(dl.find((d) => d.id === id)?.reason).toMatch(/cannot decode application\/json body/);
});

test('own wiring: a pickle body is refused naming the content type, and dead-lettered', async () => {
  const id = randomUUID();
  await publishRaw(Buffer.from([0x80, 0x04]), {
    contentType: 'application/x-python-serialize',
    correlationId: id,
    headers: v2headers('test.add', id),
  });
  await stillServes();
  expect((await deadLetters()).find((d) => d.id === id)?.reason).toMatch(/application\/x-python-serialize/);
});

test('own wiring: a message with neither a task header nor a v1 body is refused and dead-lettered', async () => {
  const id = randomUUID();
  await publishRaw(JSON.stringify({ hello: 'world' }), { contentType: 'application/json', correlationId: id });
  await stillServes();
  expect((await deadLetters()).find((d) => d.id === id)?.reason).toMatch(/neither a v2/);
});

test('own wiring: an unknown task: FAILURE NotRegistered, rejected to the dead-letter queue', async () => {
  const id = await publishTask('test.does_not_exist', []);
  const meta = await results.ready(id);
  expect(meta).toMatchObject({
    status: 'FAILURE',
    result: { exc_type: 'NotRegistered', exc_message: ['test.does_not_exist'], exc_module: 'celery.exceptions' },
  });
  await stillServes();
  expect((await deadLetters()).find((d) => d.id === id)?.reason).toMatch(/not registered/);
});

test('own wiring: arguments that fail the schema: FAILURE TypeError naming the argument, not retried', async () => {
  const id = await publishTask('test.add', ['two', 2]);
  const meta = await results.ready(id);
  expect(meta.status).toBe('FAILURE');
  expect(meta.result).toMatchObject({ exc_type: 'TypeError', exc_module: 'builtins' });
  expect(JSON.stringify(meta.result)).toContain("'x'");
});

test('own wiring: a task that throws: FAILURE with its Python class and message', async () => {
  const id = await publishTask('test.fail', ['kaboom']);
  expect(await results.ready(id)).toMatchObject({
    status: 'FAILURE',
    result: { exc_type: 'ValueError', exc_message: ['kaboom'], exc_module: 'builtins' },
  });
  expect(String((await results.meta(id))?.traceback)).toContain('ValueError: kaboom');
});

test('own wiring: a task that never settles: FAILURE TimeLimitExceeded at its hard limit, and the worker goes on', async () => {
  const id = await publishTask('test.never', []);
  const meta = await results.ready(id, 10_000);
  expect(meta.result).toEqual({ exc_type: 'TimeLimitExceeded', exc_message: [1], exc_module: 'billiard.exceptions' });
  await stillServes();
});

test('own wiring: a soft time limit from the timelimit header aborts the task signal: SoftTimeLimitExceeded', async () => {
  const id = randomUUID();
  await publishRaw(JSON.stringify([[5], {}, {}]), {
    contentType: 'application/json',
    correlationId: id,
    headers: { ...v2headers('test.sleep', id), timelimit: [10, 0.3] },
  });
  expect((await results.ready(id)).result).toEqual({
    exc_type: 'SoftTimeLimitExceeded',
    exc_message: [],
    exc_module: 'billiard.exceptions',
  });
});

test('own wiring: autoretry with backoff: retried max_retries times with the same id, then FAILURE with the original error', async () => {
  const id = await publishTask('test.autoretry', []);
  const meta = await results.ready(id, 20_000);
  expect(meta.status).toBe('FAILURE');
  expect(meta.result).toEqual({
    exc_type: 'ValueError',
    exc_message: ['always fails (retries=2)'],
    exc_module: 'builtins',
  });
});
