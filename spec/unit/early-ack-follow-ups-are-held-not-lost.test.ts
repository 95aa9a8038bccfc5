/**
 * Early ack: a follow-up the broker refuses (a retry, a dead-letter copy) is held and sent again until the
 * broker takes it, with no attempt cap; at shutdown what is still held goes to the state db and is sent at the
 * next start; without a state db each one is logged at error as lost. On the in-memory broker, whose sends
 * the test refuses and allows again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { PythonException } from '../../lib/errors.js';
import { encodeTaskMessage } from '../../lib/protocol/encode.js';
import { defineTask } from '../../lib/registry/define-task.js';
import { loadHeld } from '../../lib/worker/state-db.js';
import { type LogLine, recordingLogger } from '../support/logs.js';
import { MemoryBroker, MemoryStore } from '../support/memory-broker.js';
import { memoryConfig, memoryWorker } from '../support/memory-worker.js';
import { waitFor } from '../support/wait.js';

const Q = 'held';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = (fn: () => boolean, timeoutMs = 10_000) => waitFor(fn, timeoutMs, 10);

/** Runs by task id and retry count. */
const runs: string[] = [];
let failing = true;

const tasks = [
  defineTask({
    name: 'held.flaky',
    queue: Q,
    params: z.object({}),
    retry: { autoretryFor: 'all', maxRetries: 3, defaultRetryDelay: 0 },
    run: (_p, ctx) => {
      runs.push(`${ctx.id}:${ctx.retries}`);
      if (failing) throw new PythonException('ValueError', 'builtins', 'not yet');
      return 'ok';
    },
  }),
  defineTask({
    name: 'held.fail',
    queue: Q,
    params: z.object({}),
    retry: { autoretryFor: 'all', maxRetries: 0 },
    deadLetterOnExhaustion: true,
    run: (_p, ctx) => {
      runs.push(`${ctx.id}:${ctx.retries}`);
      throw new PythonException('ValueError', 'builtins', 'always');
    },
  }),
];

/** A broker of `store` whose publishes the test refuses (`refuse.on`). */
function refusing(store: MemoryStore) {
  const broker = new MemoryBroker(store);
  const refuse = { on: false, refused: 0 };
  const send = broker.send.bind(broker);
  broker.send = (queue, m) => {
    if (refuse.on) {
      refuse.refused++;
      return Promise.reject(new Error('OOM command not allowed when used memory > maxmemory'));
    }
    return send(queue, m);
  };
  return { broker, refuse };
}

function start(store: MemoryStore, env: Record<string, string>, lines: LogLine[]) {
  const { broker, refuse } = refusing(store);
  const values = memoryConfig(Q, {
    CELERY_WORKER_CONCURRENCY: '2',
    SMARTER_WORKER_SHUTDOWN_GRACE: '1',
    CELERY_WORKER_HOSTNAME: 'held@test',
    ...env,
  });
  const { worker, app } = memoryWorker({
    config: values,
    tasks,
    logger: recordingLogger(lines),
    defaultQueue: Q,
    broker,
  });
  return { broker, refuse, worker, app };
}

async function enqueue(store: MemoryStore, task: string): Promise<string> {
  const id = randomUUID();
  store.declare(Q);
  const producer = new MemoryBroker(store);
  await producer.connect();
  await producer.send(Q, encodeTaskMessage({ id, task, args: [], kwargs: {} }));
  await producer.close();
  return id;
}

/** A worker started with one `task` message queued for it, its broker refusing every publish from the start. */
async function startRefused(task: string, env: Record<string, string> = {}) {
  const store = new MemoryStore();
  const lines: LogLine[] = [];
  const w = start(store, env, lines);
  const id = await enqueue(store, task);
  w.refuse.on = true;
  await w.app.start();
  return { ...w, store, lines, id };
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'held-'));
  runs.length = 0;
  failing = true;
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('own wiring: early-ack follow-ups the broker refuses', () => {
  test('a retry refused for longer than the old attempt cap is held and sent once the broker takes it', async () => {
    const w = await startRefused('held.flaky');
    const { id, lines } = w;
    try {
      await until(() => runs.length === 1);
      // Refused for 8 s: the held retry is tried again with backoff (1, 2, 4 s…), never given up.
      await sleep(8000);
      expect(w.refuse.refused).toBeGreaterThanOrEqual(3);
      failing = false;
      w.refuse.on = false;
      await until(() => runs.includes(`${id}:1`), 20_000);
      expect(runs).toEqual([`${id}:0`, `${id}:1`]);
      expect(w.worker.publisher.held.size).toBe(0);
      expect(lines.some((l) => /left unacked/.test(l.message))).toBe(false);
    } finally {
      await w.app.shutdown();
    }
  }, 40_000);

  test('a dead-letter copy refused is held (never "left unacked"), and lands once', async () => {
    const w = await startRefused('held.fail');
    const { id, lines, store } = w;
    try {
      await until(() => w.worker.publisher.held.size === 1);
      await sleep(3500);
      w.refuse.on = false;
      await until(() => (store.queue(`${Q}.dead_letter`)?.ready.length ?? 0) > 0, 20_000);
      await sleep(500);
      expect(store.queue(`${Q}.dead_letter`)?.ready.length).toBe(1);
      expect(runs).toEqual([`${id}:0`]);
      expect(lines.some((l) => /left unacked/.test(l.message))).toBe(false);
    } finally {
      await w.app.shutdown();
    }
  }, 40_000);

  test('at shutdown held publishes go to the state db, and are sent at the next start', async () => {
    const statedb = path.join(dir, 'worker.state');
    const env = { CELERY_WORKER_STATE_DB: statedb };
    const first = await startRefused('held.flaky', env);
    const { id, lines, store } = first;
    await until(() => first.worker.publisher.held.size === 1);
    await first.app.shutdown();
    const written = loadHeld(statedb);
    expect(written.map((p) => [p.id, p.what])).toEqual([[id, 'retry']]);
    expect(lines.some((l) => l.level === 'warn' && /wrote 1 held publish\(es\) to the state db/.test(l.message))).toBe(
      true,
    );
    expect(lines.some((l) => /^lost /.test(l.message))).toBe(false);

    failing = false;
    const second = start(store, env, lines);
    await second.app.start();
    try {
      await until(() => runs.includes(`${id}:1`), 20_000);
      expect(runs).toEqual([`${id}:0`, `${id}:1`]);
      await until(() => loadHeld(statedb).length === 0);
    } finally {
      await second.app.shutdown();
    }
  }, 40_000);

  test('without a state db, each publish still held at shutdown is logged at error as lost', async () => {
    const w = await startRefused('held.flaky');
    const { id, lines } = w;
    await until(() => w.worker.publisher.held.size === 1);
    await w.app.shutdown();
    const lost = lines.filter((l) => l.level === 'error' && l.message.startsWith('lost '));
    expect(lost.map((l) => l.meta.id)).toEqual([id]);
    expect(lost[0]?.message).toMatch(/^lost retry of .*no state db \(--statedb\) keeps it/);
  }, 40_000);
});
