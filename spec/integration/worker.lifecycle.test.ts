/**
 * The worker's life on a real broker: prefetch, late ack across a crash, warm and cold shutdown,
 * reconnect after the broker drops the connection, and queues that already exist with other arguments.
 */
import { type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  AMQP_URL,
  REDIS_URL,
  closeConnectionNamed,
  deleteQueues,
  publishMany,
  publishRaw,
  uniqueName,
  withChannel,
} from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { startWorker, withWorker } from '../support/harness.js';
import { ResultReader } from '../support/results.js';
import { spawnTestWorker } from '../support/spawn-worker.js';

let results: ResultReader;
beforeAll(() => {
  results = new ResultReader();
});
afterAll(async () => results.close());

async function publishTask(queue: string, task: string, args: unknown[]): Promise<string> {
  const id = randomUUID();
  await publishRaw(queue, JSON.stringify([args, {}, {}]), {
    contentType: 'application/json',
    correlationId: id,
    headers: { task, id, lang: 'py', retries: 0 },
  });
  return id;
}

async function queueCounts(queue: string): Promise<{ ready: number; consumers: number }> {
  return withChannel(async (ch) => {
    const q = await ch.checkQueue(queue);
    return { ready: q.messageCount, consumers: q.consumerCount };
  });
}

function spawnWorker(queue: string, env: Record<string, string> = {}): ChildProcess {
  return spawnTestWorker({
    queue,
    concurrency: 2,
    env: { CELERY_BROKER_URL: AMQP_URL, CELERY_RESULT_BACKEND: REDIS_URL, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function consumerUp(queue: string): Promise<void> {
  await waitFor(async () => (await queueCounts(queue).catch(() => ({ consumers: 0 }))).consumers > 0, 30_000, 100);
}

/** Runs `fn` with a worker process consuming a queue of its own; the queue is deleted after, whatever `fn` did. */
async function withWorkerProcess(label: string, fn: (queue: string, child: ChildProcess) => Promise<void>) {
  const queue = uniqueName(label);
  const child = spawnWorker(queue);
  try {
    await consumerUp(queue);
    await fn(queue, child);
  } finally {
    await deleteQueues([queue]);
  }
}

test.each([
  // Early ack (Celery's default): running tasks are acked, so the window of 4 unacked is all reserved.
  ['early', 'false', 4, 4],
  // Late ack: the running tasks stay unacked and count against the window.
  ['late', 'true', 6, 2],
])(
  'own wiring: prefetch is multiplier × concurrency (2 × 2), %s ack (acks_late=%s): %d of 10 wait in the queue',
  async (_mode, acksLate, ready, reserved) => {
    const h = await startWorker({
      env: { CELERY_WORKER_CONCURRENCY: '2', CELERY_WORKER_PREFETCH_MULTIPLIER: '2', CELERY_TASK_ACKS_LATE: acksLate },
    });
    try {
      const messages = Array.from({ length: 10 }, () => {
        const id = randomUUID();
        return {
          body: JSON.stringify([[5], {}, {}]),
          options: { contentType: 'application/json', correlationId: id, headers: { task: 'test.sleep', id } },
        };
      });
      await publishMany(h.queue, messages);
      await waitFor(
        async () => (await queueCounts(h.queue)).ready === ready && h.worker.reservedCount === reserved,
        3000,
      );
      await new Promise((r) => setTimeout(r, 300));
      expect((await queueCounts(h.queue)).ready).toBe(ready);
      expect(h.worker.active.size).toBe(2);
      expect(h.worker.reservedCount).toBe(reserved);
    } finally {
      await h.app.coldShutdown();
      await deleteQueues([h.queue]);
    }
  },
);

test('own wiring: late ack: a task whose worker is SIGKILLed mid-run is redelivered and runs to the end on restart', async () => {
  await withWorkerProcess('crash', async (queue, first) => {
    const id = await publishTask(queue, 'test.late', [3]);
    await new Promise((r) => setTimeout(r, 1000));
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    expect(await results.meta(id)).toBeUndefined();
    const second = spawnWorker(queue);
    try {
      expect(await results.ready(id, 30_000)).toMatchObject({ status: 'SUCCESS', result: 'late' });
    } finally {
      second.kill('SIGTERM');
      await new Promise((r) => second.once('exit', r));
    }
  });
});

test('own wiring: warm shutdown (SIGTERM): stops consuming, lets the running task finish, exits 0', async () => {
  await withWorkerProcess('warm', async (queue, child) => {
    const id = await publishTask(queue, 'test.sleep', [1.5]);
    await waitFor(async () => (await queueCounts(queue)).ready === 0);
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGTERM');
    const code = await new Promise((r) => child.once('exit', r));
    expect(code).toBe(0);
    expect(await results.meta(id)).toMatchObject({ status: 'SUCCESS', result: 1.5 });
  });
});

test('own wiring: cold shutdown (SIGTERM then SIGINT): the running early-acked task goes back to its queue, exit 1', async () => {
  await withWorkerProcess('cold', async (queue, child) => {
    await publishTask(queue, 'test.sleep', [30]);
    await waitFor(async () => (await queueCounts(queue)).ready === 0);
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGINT');
    const code = await new Promise((r) => child.once('exit', r));
    expect(code).toBe(1);
    expect((await queueCounts(queue)).ready).toBe(1);
  });
});

test('own wiring: after the broker closes its connection, the worker reconnects and consumes again', async () => {
  await withWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL } }, async (h) => {
    const before = await publishTask(h.queue, 'test.add', [1, 1]);
    expect((await results.ready(before)).result).toBe(2);
    // Only this worker's connection: the broker is shared.
    await closeConnectionNamed(h.worker.options.nodeName, 'reconnect test');
    await waitFor(() => !h.broker.connected, 5000);
    await waitFor(() => h.broker.connected, 20_000);
    const after = await publishTask(h.queue, 'test.add', [2, 2]);
    expect((await results.ready(after)).result).toBe(4);
  });
});

test.each([
  ['x-max-priority', { 'x-max-priority': 10 }],
  ['quorum', { 'x-queue-type': 'quorum' }],
])(
  'own wiring: a queue that already exists with other arguments (%s) is consumed, not redeclared',
  async (_n, args) => {
    const queue = uniqueName('existing');
    await withChannel((ch) => ch.assertQueue(queue, { durable: true, arguments: args }));
    await withWorker({ queue, env: { CELERY_RESULT_BACKEND: REDIS_URL } }, async () => {
      const id = await publishTask(queue, 'test.add', [3, 4]);
      expect((await results.ready(id)).result).toBe(7);
    });
  },
);

test('own wiring: an ETA message is held and run when due; one whose expiry passes while held is REVOKED', async () => {
  await withWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL } }, async (h) => {
    const now = Date.now();
    const due = randomUUID();
    const expiring = randomUUID();
    await publishRaw(h.queue, JSON.stringify([[1, 2], {}, {}]), {
      contentType: 'application/json',
      correlationId: due,
      headers: { task: 'test.add', id: due, eta: new Date(now + 1500).toISOString() },
    });
    await publishRaw(h.queue, JSON.stringify([[1, 2], {}, {}]), {
      contentType: 'application/json',
      correlationId: expiring,
      headers: {
        task: 'test.add',
        id: expiring,
        eta: new Date(now + 1500).toISOString(),
        expires: new Date(now + 500).toISOString(),
      },
    });
    await waitFor(() => h.worker.heldCount === 2, 5000);
    expect(await results.meta(due)).toBeUndefined();
    expect(await results.ready(due)).toMatchObject({ status: 'SUCCESS', result: 3 });
    expect(Date.now() - now).toBeGreaterThanOrEqual(1400);
    expect(await results.ready(expiring)).toMatchObject({ status: 'REVOKED', result: { exc_message: ['expired'] } });
  });
});
