/**
 * While the broker refuses publishes (RabbitMQ blocks a publishing connection under a memory or disk alarm), a
 * countdown's park would wait with its message in a prefetch slot: with a window of one, the quick tasks behind
 * it stop too. An early-ack countdown waits in the publish hold instead, its message acked, and is parked once
 * the broker takes publishes again; a late-ack one keeps its message unacked until it is parked. On the
 * in-memory broker, whose delayed sends the test blocks (they wait, as RabbitMQ's do, and never fail).
 */
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import type { BrokerBlock } from '../../lib/broker/broker.js';
import { encodeTaskMessage } from '../../lib/protocol/encode.js';
import { PyDateTime } from '../../lib/protocol/values.js';
import { defineTask } from '../../lib/registry/define-task.js';
import { MemoryBroker, MemoryStore } from '../support/memory-broker.js';
import { memoryConfig, memoryWorker } from '../support/memory-worker.js';
import { waitFor } from '../support/wait.js';

const Q = 'blocked';
const ran: string[] = [];

const tasks = [
  defineTask({ name: 'blocked.quick', queue: Q, params: z.object({}), run: (_p, ctx) => void ran.push(ctx.id) }),
  defineTask({
    name: 'blocked.late',
    queue: Q,
    acksLate: true,
    params: z.object({}),
    run: (_p, ctx) => void ran.push(ctx.id),
  }),
];

/** A broker whose delayed sends wait while `block.on` (as a blocked RabbitMQ connection's publishes wait). */
function blocking(store: MemoryStore) {
  const broker = new MemoryBroker(store);
  let release: () => void = () => undefined;
  let gate = Promise.resolve();
  const block = {
    get on() {
      return this.since !== undefined;
    },
    since: undefined as number | undefined,
    raise() {
      this.since = Date.now();
      gate = new Promise<void>((r) => (release = r));
    },
    clear() {
      this.since = undefined;
      release();
    },
  };
  Object.defineProperty(broker, 'blocked', {
    get: (): BrokerBlock | undefined =>
      block.since === undefined ? undefined : { reason: 'low on memory', since: block.since },
  });
  const sendLater = broker.sendLater.bind(broker);
  broker.sendLater = async (queue, m, delayMs) => {
    await gate;
    return sendLater(queue, m, delayMs);
  };
  return { broker, block };
}

async function startWorker() {
  const store = new MemoryStore();
  const { broker, block } = blocking(store);
  const values = memoryConfig(Q, {
    CELERY_WORKER_CONCURRENCY: '1',
    CELERY_WORKER_PREFETCH_MULTIPLIER: '1',
    SMARTER_WORKER_SHUTDOWN_GRACE: '1',
    CELERY_WORKER_HOSTNAME: 'blocked@test',
    // A countdown of a few seconds is parked, not held by the worker.
    SMARTER_WORKER_ETA_HOLD_MAX: '1',
  });
  const { worker, app } = memoryWorker({ config: values, tasks, defaultQueue: Q, broker });
  store.declare(Q);
  const producer = new MemoryBroker(store);
  await producer.connect();
  const send = async (task: string, etaMs?: number) => {
    const id = randomUUID();
    const eta = etaMs === undefined ? null : PyDateTime.fromEpochMs(etaMs);
    await producer.send(Q, encodeTaskMessage({ id, task, args: [], kwargs: {}, eta }));
    return id;
  };
  return { store, block, worker, app, send, producer };
}

beforeEach(() => {
  ran.length = 0;
});

test('own wiring: an early-ack countdown waits acked in the publish hold while the broker blocks, and the quick tasks behind it run', async () => {
  const w = await startWorker();
  w.block.raise();
  // Far enough ahead that a slow start still finds it parked, not held as almost due (ETA_HOLD_MAX).
  const countdown = await w.send('blocked.quick', Date.now() + 8000);
  const quick = [];
  for (let i = 0; i < 20; i++) quick.push(await w.send('blocked.quick'));
  await w.app.start();
  try {
    // One slot, a window of one: a countdown waiting in its slot for the alarm to end would stop them all.
    // The block stays raised meanwhile: a countdown waiting in the slot would stop them for good.
    await waitFor(() => ran.length === 20, 10_000, { what: 'the quick tasks behind the countdown' });
    expect(ran.sort()).toEqual([...quick].sort());
    expect(w.worker.publisher.held.size).toBe(1);
    expect(w.store.queue(Q)?.ready.length).toBe(0);
    expect(unsettled(w)).toBe(0);
    w.block.clear();
    await waitFor(() => w.worker.publisher.held.size === 0, 20_000, { what: 'the held countdown parked' });
    expect(w.store.sent.filter((s) => s.delayMs > 0)).toHaveLength(1);
    await waitFor(() => ran.includes(countdown), 15_000, { what: 'the countdown, when due' });
    expect(ran.filter((id) => id === countdown)).toHaveLength(1);
  } finally {
    await w.app.shutdown();
    await w.producer.close();
    w.store.clear();
  }
}, 40_000);

test('own wiring: a late-ack countdown keeps its message unacked until it is parked', async () => {
  const w = await startWorker();
  w.block.raise();
  const countdown = await w.send('blocked.late', Date.now() + 4000);
  await w.app.start();
  try {
    await waitFor(() => unsettled(w) === 1, 5000, { what: 'the countdown delivered' });
    await new Promise((r) => setTimeout(r, 500));
    expect(w.worker.publisher.held.size).toBe(0);
    expect(unsettled(w)).toBe(1);
    w.block.clear();
    await waitFor(() => unsettled(w) === 0, 10_000, { what: 'the countdown parked and acked' });
    await waitFor(() => ran.includes(countdown), 10_000, { what: 'the countdown, when due' });
  } finally {
    await w.app.shutdown();
    await w.producer.close();
    w.store.clear();
  }
}, 40_000);

/** The queue's messages delivered to the worker and not settled yet. */
function unsettled(w: Awaited<ReturnType<typeof startWorker>>): number {
  return (w.store.queue(Q)?.consumers ?? []).reduce((n, c) => n + c.unsettled, 0);
}
