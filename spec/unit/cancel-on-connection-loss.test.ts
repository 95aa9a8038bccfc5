/**
 * Celery's `worker_cancel_long_running_tasks_on_connection_loss` (on by default): when the connection a late-ack
 * message came on is lost, the broker hands that message to a worker again, so the run still going here is
 * cancelled (its AbortSignal fires, RETRY is reported, never SUCCESS) instead of running twice at once. Off, the
 * first run goes on beside its redelivered copy. On the in-memory broker, whose `crash()` is a lost connection.
 */
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { encodeTaskMessage } from '../../lib/protocol/encode.js';
import { defineTask } from '../../lib/registry/define-task.js';
import { noEvents } from '../../lib/worker/events.js';
import { MemoryBroker, MemoryStore } from '../support/memory-broker.js';
import { memoryConfig, memoryWorker } from '../support/memory-worker.js';
import { waitFor } from '../support/wait.js';

const Q = 'loss';
const until = (fn: () => boolean, timeoutMs = 5000) => waitFor(fn, timeoutMs, 5);

function start(env: Record<string, string>) {
  const broker = new MemoryBroker(new MemoryStore());
  const seen = { retried: [] as string[], succeeded: [] as string[], aborted: [] as string[] };
  let running = 0;
  let most = 0;
  let runs = 0;
  const release: Array<() => void> = [];
  const task = defineTask({
    name: 'loss.long',
    queue: Q,
    params: z.object({}),
    run: async (_p, ctx) => {
      runs++;
      running++;
      most = Math.max(most, running);
      try {
        // The first run waits until released or aborted; the redelivered one ends at once.
        if (runs === 1) {
          await new Promise<void>((resolve, reject) => {
            release.push(resolve);
            ctx.signal.addEventListener('abort', () => {
              seen.aborted.push(String((ctx.signal.reason as Error).message));
              reject(ctx.signal.reason as Error);
            });
          });
        }
        return 'done';
      } finally {
        running--;
      }
    },
  });
  const values = memoryConfig(Q, {
    CELERY_TASK_ACKS_LATE: 'true',
    SMARTER_WORKER_SHUTDOWN_GRACE: '1',
    ...env,
  });
  const { worker, app } = memoryWorker({
    config: values,
    tasks: [task],
    defaultQueue: Q,
    broker,
    events: {
      ...noEvents,
      retried: (m) => void seen.retried.push(m.id),
      succeeded: (m) => void seen.succeeded.push(m.id),
    },
  });
  return { broker, worker, app, seen, release, stats: () => ({ runs, most }) };
}

async function sendOne(broker: MemoryBroker): Promise<string> {
  const id = randomUUID();
  await broker.send(Q, encodeTaskMessage({ id, task: 'loss.long', args: [], kwargs: {} }));
  return id;
}

describe('own wiring: a late-ack run whose connection is lost', () => {
  test('is cancelled by default: its signal fires, RETRY not SUCCESS, and it never runs beside its redelivered copy', async () => {
    const w = start({});
    await w.app.start();
    try {
      const id = await sendOne(w.broker);
      await until(() => w.stats().runs === 1);
      w.broker.crash(new Error('connection reset'));
      await until(() => w.seen.retried.length === 1);
      expect(w.seen.aborted).toEqual(['cancelled: the connection its message came on was lost']);
      expect(w.worker.active.size).toBe(0);
      w.broker.restore();
      await until(() => w.seen.succeeded.length === 1);
      expect(w.seen).toMatchObject({ retried: [id], succeeded: [id] });
      expect(w.stats()).toEqual({ runs: 2, most: 1 });
    } finally {
      await w.app.shutdown();
    }
  });

  test('runs on beside its redelivered copy with the setting off (the harm it prevents)', async () => {
    const w = start({ CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS: 'false' });
    await w.app.start();
    try {
      const id = await sendOne(w.broker);
      await until(() => w.stats().runs === 1);
      w.broker.crash(new Error('connection reset'));
      w.broker.restore();
      await until(() => w.seen.succeeded.length === 1);
      for (const r of w.release) r();
      await until(() => w.seen.succeeded.length === 2);
      expect(w.seen.aborted).toEqual([]);
      expect(w.seen.retried).toEqual([]);
      expect(w.seen.succeeded).toEqual([id, id]);
      expect(w.stats()).toEqual({ runs: 2, most: 2 });
    } finally {
      await w.app.shutdown();
    }
  });
});
