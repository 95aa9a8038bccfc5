/**
 * The worker on the in-memory broker: its pump, holding, settling and cold shutdown, with no network.
 * The same worker that runs on RabbitMQ, built by `createWorker` with the broker handed in.
 */
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { encodeTaskMessage } from '../../lib/protocol/encode.js';
import { PyDateTime } from '../../lib/protocol/values.js';
import { type AnyTask, defineTask } from '../../lib/registry/define-task.js';
import { MemoryBroker, MemoryStore } from '../support/memory-broker.js';
import { failingTask, memoryConfig, memoryWorker } from '../support/memory-worker.js';
import { waitFor } from '../support/wait.js';
import { recordingLogger } from '../support/logs.js';
import { taskStubs } from '../../lib/registry/task-stubs.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A gate a task waits on, opened by the test; it also opens when the run is aborted. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

const Q = 'mem';

function start(tasks: AnyTask[], env: Record<string, string> = {}) {
  const store = new MemoryStore();
  const broker = new MemoryBroker(store);
  const values = memoryConfig(Q, {
    CELERY_WORKER_CONCURRENCY: '2',
    SMARTER_WORKER_SHUTDOWN_GRACE: '1',
    CELERY_WORKER_HOSTNAME: 'mem@test',
    ...env,
  });
  const { worker, app } = memoryWorker({ config: values, tasks, defaultQueue: Q, broker });
  const send = async (
    task: string,
    kwargs: Record<string, unknown>,
    o: { eta?: number; ignoreResult?: boolean } = {},
  ) => {
    const id = randomUUID();
    await broker.send(
      Q,
      encodeTaskMessage({
        id,
        task,
        args: [],
        kwargs,
        ...(o.eta ? { eta: PyDateTime.fromEpochMs(o.eta) } : {}),
        ...(o.ignoreResult ? { ignoreResult: true } : {}),
      }),
    );
    return id;
  };
  const ready = () => store.queue(Q)?.ready.length ?? 0;
  return { store, broker, worker, app, send, ready };
}

test('own wiring: the pump runs no more than the concurrency at once and takes the next as each run ends', async () => {
  const gates = new Map<number, ReturnType<typeof gate>>();
  let running = 0;
  let most = 0;
  const done: number[] = [];
  const w = start([
    defineTask({
      name: 'mem.wait',
      queue: Q,
      params: z.object({ n: z.number() }),
      run: async ({ n }) => {
        running++;
        most = Math.max(most, running);
        const g = gate();
        gates.set(n, g);
        await g.opened;
        running--;
        done.push(n);
      },
    }),
  ]);
  await w.app.start();
  try {
    for (let n = 0; n < 5; n++) await w.send('mem.wait', { n });
    await waitFor(() => gates.size === 2, 5000, 5);
    await sleep(50);
    expect(w.worker.active.size).toBe(2);
    expect(w.worker.reservedCount).toBe(3);
    for (let i = 0; i < 5; i++) {
      await waitFor(() => [...gates.keys()].some((k) => !done.includes(k) && gates.get(k)), 5000, 5);
      const next = [...gates.keys()].find((k) => !done.includes(k));
      if (next !== undefined) gates.get(next)?.open();
      await waitFor(() => done.length === i + 1, 5000, 5);
    }
    expect(most).toBe(2);
    expect(done.sort()).toEqual([0, 1, 2, 3, 4]);
    await waitFor(() => w.worker.active.size === 0, 5000, 5);
    expect(w.ready()).toBe(0);
  } finally {
    await w.app.shutdown();
  }
});

test('own wiring: late-ack tasks that return a value (no promise) and store no result end within the turn that starts them: each runs once and is acked, and the one that throws fails without stopping the rest', async () => {
  const ran: number[] = [];
  let endedInTurn = 0;
  const w = start(
    [
      defineTask({
        name: 'mem.sync',
        queue: Q,
        params: z.object({ n: z.number() }),
        run: ({ n }) => {
          ran.push(n);
          if (n === 3) throw new Error('three');
          // Counted as processed (run and settled) before anything queued now gets to run.
          const before = w.worker.processed.get('mem.sync') ?? 0;
          queueMicrotask(() => {
            if ((w.worker.processed.get('mem.sync') ?? 0) > before) endedInTurn++;
          });
          return n * 2;
        },
      }),
    ],
    { CELERY_TASK_ACKS_LATE: 'true' },
  );
  await w.app.start();
  try {
    for (let n = 0; n < 20; n++) await w.send('mem.sync', { n }, { ignoreResult: true });
    await waitFor(() => (w.worker.processed.get('mem.sync') ?? 0) === 20, 5000, 5);
    expect([...ran].sort((a, b) => a - b)).toEqual([...Array(20).keys()]);
    expect(endedInTurn).toBe(19);
    expect(w.worker.active.size).toBe(0);
    expect(w.worker.reservedCount).toBe(0);
    await sleep(20);
    expect(w.ready()).toBe(0);
    expect(w.store.queue(Q)?.consumers.reduce((n, c) => n + c.unsettled, 0)).toBe(0);
  } finally {
    await w.app.shutdown();
  }
});

test('own wiring: an ETA in the near future is held, not run, until it is due; then it runs', async () => {
  const ran: number[] = [];
  const w = start([
    defineTask({ name: 'mem.at', queue: Q, params: z.object({}), run: () => void ran.push(Date.now()) }),
  ]);
  await w.app.start();
  try {
    const due = Date.now() + 400;
    await w.send('mem.at', {}, { eta: due });
    await waitFor(() => w.worker.heldCount === 1, 5000, 5);
    expect(ran).toHaveLength(0);
    await waitFor(() => ran.length === 1, 5000, 5);
    expect(ran[0]).toBeGreaterThanOrEqual(due);
    expect(w.worker.heldCount).toBe(0);
  } finally {
    await w.app.shutdown();
  }
});

test('own wiring: a far ETA is sent later through the broker and acked, not held', async () => {
  const w = start([defineTask({ name: 'mem.far', queue: Q, params: z.object({}), run: () => 'ran' })]);
  await w.app.start();
  try {
    await w.send('mem.far', {}, { eta: Date.now() + 3_600_000 });
    await waitFor(() => w.worker.offloaded === 1, 5000, 5);
    expect(w.worker.heldCount).toBe(0);
    const later = w.store.sent.filter((s) => s.delayMs > 0);
    expect(later).toHaveLength(1);
    expect(later[0]?.queue).toBe(Q);
    expect(later[0]?.delayMs).toBeGreaterThan(3_500_000);
  } finally {
    await w.app.shutdown();
    w.store.clear();
  }
});

test('own wiring: settling: a message that cannot be decoded is copied to the dead-letter queue with its reason, and acked', async () => {
  const w = start([]);
  await w.app.start();
  try {
    await w.broker.send(Q, {
      body: Buffer.from('{not json'),
      properties: {
        contentType: 'application/json',
        contentEncoding: 'utf-8',
        headers: { task: 'x', id: 'bad-1' },
        deliveryMode: 2,
        priority: 0,
        correlationId: 'bad-1',
      },
    });
    await waitFor(() => (w.store.queue(`${Q}.dead_letter`)?.ready.length ?? 0) === 1, 5000, 5);
    const copy = w.store.queue(`${Q}.dead_letter`)?.ready[0];
    expect(copy?.body.toString()).toBe('{not json');
    expect(copy?.raw.headers).toMatchObject({ 'x-original-queue': Q, 'x-dead-lettered-by': 'mem@test' });
    expect(String((copy?.raw.headers as Record<string, unknown>)['x-dead-letter-reason'])).toMatch(/JSON|json|decode/i);
    expect(w.ready()).toBe(0);
  } finally {
    await w.app.shutdown();
  }
});

test('own wiring: settling: a failure with late ack is acked (acks_on_failure_or_timeout) and not dead-lettered', async () => {
  const w = start([failingTask('mem.fail', Q, 'no')], { CELERY_TASK_ACKS_LATE: 'true' });
  await w.app.start();
  try {
    await w.send('mem.fail', {});
    await waitFor(() => (w.worker.processed.get('mem.fail') ?? 0) === 1, 5000, 5);
    await sleep(50);
    expect(w.ready()).toBe(0);
    expect(w.store.queue(`${Q}.dead_letter`)?.ready.length ?? 0).toBe(0);
  } finally {
    await w.app.shutdown();
  }
});

test('own wiring: cold shutdown cancels a late-ack run and its message goes back to the queue, to run again', async () => {
  let started = 0;
  const w = start(
    [
      defineTask({
        name: 'mem.long',
        queue: Q,
        params: z.object({}),
        run: async (_p, ctx) => {
          started++;
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
          throw new Error('aborted');
        },
      }),
    ],
    { CELERY_TASK_ACKS_LATE: 'true' },
  );
  await w.app.start();
  await w.send('mem.long', {});
  await waitFor(() => started === 1, 5000, 5);
  await w.app.coldShutdown();
  await w.broker.close();
  expect(w.ready()).toBe(1);
  expect(w.store.queue(Q)?.ready[0]?.redelivered).toBe(true);
});

test('own wiring: a lost connection drops what was held from it unrun; the broker delivers it again after the reconnect', async () => {
  const ran: string[] = [];
  const w = start([
    defineTask({ name: 'mem.at', queue: Q, params: z.object({}), run: (_p, ctx) => void ran.push(ctx.id) }),
  ]);
  await w.app.start();
  try {
    const id = await w.send('mem.at', {}, { eta: Date.now() + 500 });
    await waitFor(() => w.worker.heldCount === 1, 5000, 5);
    w.broker.crash();
    expect(w.worker.heldCount).toBe(0);
    expect(w.worker.droppedStale).toBe(1);
    w.broker.restore();
    await waitFor(() => ran.length === 1, 5000, 5);
    expect(ran).toEqual([id]);
  } finally {
    await w.app.shutdown();
  }
});

test('own wiring: starting a worker twice is refused', async () => {
  const w = start([]);
  await w.app.start();
  try {
    await expect(w.worker.start()).rejects.toThrow(/start/);
  } finally {
    await w.app.shutdown();
  }
});

test("own wiring: remote rate and time limits change this worker's runs only, never the shared task object", async () => {
  const limits: Array<number | undefined> = [];
  const task = defineTask({ name: 'mem.lim', queue: Q, params: z.object({}), timeLimit: 30, run: () => 'ok' });
  const a = start([task]);
  const b = start([task]);
  await a.app.start();
  await b.app.start();
  try {
    expect(a.worker.setRateLimit('mem.lim', '1/m')).toBe(true);
    expect(a.worker.setTimeLimits('mem.lim', 1, 2)).toBe(true);
    limits.push(task.timeLimit);
    expect(task.rateLimit).toBeUndefined();
    expect(limits).toEqual([30]);
    // The other worker still runs it at once, as often as it comes.
    for (let i = 0; i < 3; i++) await b.send('mem.lim', {});
    await waitFor(() => (b.worker.processed.get('mem.lim') ?? 0) === 3, 5000, 5);
    // This one runs the first, then waits for the next token (a minute away).
    for (let i = 0; i < 2; i++) await a.send('mem.lim', {});
    await waitFor(() => (a.worker.processed.get('mem.lim') ?? 0) === 1, 5000, 5);
    await sleep(100);
    expect(a.worker.processed.get('mem.lim')).toBe(1);
    expect(a.worker.setRateLimit('nope', '1/s')).toBe(false);
  } finally {
    await a.app.coldShutdown();
    await b.app.shutdown();
  }
});

/** A broker whose delay levels are declared when the test says so (or fail then). */
class LevelsOnCue extends MemoryBroker {
  private cue: (err?: Error) => void = () => undefined;
  private readonly declared = new Promise<void>((resolve, reject) => {
    this.cue = (err) => (err ? reject(err) : resolve());
  });
  levelsAsked = false;
  override async declareDelayed(): Promise<void> {
    this.levelsAsked = true;
    await this.declared;
  }
  levelsDeclared(): void {
    this.cue();
  }
  levelsFail(err: Error): void {
    this.cue(err);
  }
}

function startOnCue(tasks: AnyTask[]) {
  const store = new MemoryStore();
  const broker = new LevelsOnCue(store);
  const values = memoryConfig(Q, {
    CELERY_WORKER_CONCURRENCY: '1',
    SMARTER_WORKER_SHUTDOWN_GRACE: '5',
    CELERY_WORKER_HOSTNAME: 'cue@test',
  });
  const { worker, app } = memoryWorker({ config: values, tasks, defaultQueue: Q, broker });
  // Sent before the worker starts, by a producer of its own.
  const send = async (task: string, kwargs: Record<string, unknown>) => {
    const producer = new MemoryBroker(store);
    await producer.connect();
    store.declare(Q);
    await producer.send(Q, encodeTaskMessage({ id: randomUUID(), task, args: [], kwargs }));
    await producer.close();
  };
  return { store, broker, worker, app, send };
}

test('own wiring: tasks run while the delay levels are still being declared; start ends once they are', async () => {
  const ran: number[] = [];
  const w = startOnCue([
    defineTask({ name: 'mem.cue', queue: Q, params: z.object({ n: z.number() }), run: ({ n }) => void ran.push(n) }),
  ]);
  for (let n = 0; n < 3; n++) await w.send('mem.cue', { n });
  let started = false;
  const starting = w.app.start().then(() => (started = true));
  try {
    await waitFor(() => ran.length === 3, 5000, 5);
    expect(w.broker.levelsAsked).toBe(true);
    expect(started).toBe(false);
    expect(w.worker.state).toBe('RUNNING');
    w.broker.levelsDeclared();
    await starting;
    expect(w.store.queue(Q)?.ready.length).toBe(0);
  } finally {
    w.broker.levelsDeclared();
    await w.app.shutdown();
  }
});

test('own wiring: delay levels that cannot be declared stop the worker warm: the running task ends, the rest waits in its queue, start fails', async () => {
  const g = gate();
  const ran: number[] = [];
  const w = startOnCue([
    defineTask({
      name: 'mem.cue',
      queue: Q,
      params: z.object({ n: z.number() }),
      run: async ({ n }) => {
        ran.push(n);
        await g.opened;
      },
    }),
  ]);
  for (let n = 0; n < 3; n++) await w.send('mem.cue', { n });
  const starting = w.app.start().then(
    () => undefined,
    (err: unknown) => err,
  );
  await waitFor(() => ran.length === 1, 5000, 5);
  w.broker.levelsFail(new Error('PRECONDITION_FAILED - inequivalent arg x-queue-type for celery_delayed_27'));
  await sleep(50);
  // The warm shutdown waits for the running task.
  expect(w.worker.state).toBe('DRAINING');
  g.open();
  const err = await starting;
  expect(err).toBeInstanceOf(Error);
  expect((err as Error).message).toMatch(/PRECONDITION_FAILED/);
  expect(w.worker.state).toBe('STOPPED');
  expect(ran).toEqual([0]);
  // The task that ran was acked; the two it had not started are back in the queue.
  expect(w.store.queue(Q)?.ready.length).toBe(2);
});

test("own wiring: a stub's task runs once its code is loaded by the first message naming it; a stub that cannot load leaves its message unacked, and the rest runs", async () => {
  const store = new MemoryStore();
  const broker = new MemoryBroker(store);
  const logger = recordingLogger();
  const ran: string[] = [];
  let loads = 0;
  const body = (name: string) => defineTask({ name, queue: Q, params: z.object({}), run: () => void ran.push(name) });
  const stubs = [
    ...taskStubs([{ name: 'app.lazy', queue: Q }], async () => {
      loads++;
      return [body('app.lazy')];
    }),
    ...taskStubs([{ name: 'app.broken', queue: Q }], async () => {
      throw new Error('Cannot find module ./chunks/broken.js');
    }),
  ];
  const values = memoryConfig(Q, { CELERY_WORKER_CONCURRENCY: '2', CELERY_WORKER_HOSTNAME: 'stub@test' });
  const { worker, app } = memoryWorker({
    config: values,
    tasks: [],
    taskStubs: stubs,
    defaultQueue: Q,
    broker,
    logger,
  });
  await app.start();
  try {
    expect(worker.registeredNames()).toEqual(expect.arrayContaining(['app.lazy', 'app.broken']));
    expect(loads).toBe(0);
    for (const task of ['app.broken', 'app.lazy', 'app.lazy']) {
      await broker.send(Q, encodeTaskMessage({ id: randomUUID(), task, args: [], kwargs: {} }));
    }
    await waitFor(() => ran.length === 2, 5000, 5);
    expect(ran).toEqual(['app.lazy', 'app.lazy']);
    expect(loads).toBe(1);
    expect(logger.lines.filter((l) => l.level === 'error').map((l) => [l.message, l.meta.error])).toEqual([
      [
        expect.stringMatching(/^could not load task app\.broken for .+; its message stays unacked$/),
        'Cannot find module ./chunks/broken.js',
      ],
    ]);
  } finally {
    await app.shutdown();
  }
  // Not lost: back in its queue once the worker's connection closed.
  expect(store.queue(Q)?.ready.map((e) => JSON.stringify(e.raw.headers))).toEqual([
    expect.stringContaining('"task":"app.broken"'),
  ]);
});
