/**
 * RabbitMQ faults under load, on a node of the test's own: stop_app/start_app, a full stop and start of the
 * node, close_all_connections, and a channel error raised by the broker on the worker's consume channel. 1,250
 * late-ack tasks are in flight at each fault (5,000 in all); after each the worker is back on its own: every task
 * completes, it consumes its task queue and its pidbox again (a Python `ping` is answered), a countdown goes through
 * the delay topology, and Beat retakes its lock and keeps sending.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { REDIS_URL, publishMany, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { spawnBeat } from '../support/beat-process.js';
import { faultTasks } from '../support/fault-tasks.js';
import { type Harness, startWorker } from '../support/harness.js';
import { type RabbitNode, startRabbitNode } from '../support/rabbit-node.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';
import { PYTHON } from '../support/python-worker.js';

const exec = promisify(execFile);
const PER_FAULT = 1250;
const redis = runCounter();
const keys: string[] = [];
let node: RabbitNode;
let h: Harness;
let beat: ChildProcess;
let beatSends = 0;
let disconnects = 0;
const beatStore = uniqueName('beat-store');
let completed = 0;

beforeAll(async () => {
  node = await startRabbitNode();
  h = await startWorker({
    tasks: (q) => faultTasks(q, { acksLate: true }),
    env: {
      CELERY_BROKER_URL: node.url,
      CELERY_WORKER_CONCURRENCY: '16',
      CELERY_BROKER_HEARTBEAT: '5',
      SMARTER_WORKER_ETA_HOLD_MAX: '1',
    },
  });
  h.broker.on('disconnected', () => disconnects++);
  beat = spawnBeat(
    {
      BEAT_QUEUE: uniqueName('beatq'),
      BEAT_STORE_KEY: beatStore,
      BEAT_LOCK: uniqueName('lock'),
      AMQP_URL: node.url,
      REDIS_URL,
    },
    () => beatSends++,
    'ignore',
  );
  await waitFor(() => beatSends >= 1, 30_000);
}, 120_000);

afterAll(async () => {
  process.stdout.write(
    `RabbitMQ faults: ${completed} of ${PER_FAULT * 4} tasks completed across 4 faults, ${disconnects} reconnects, Beat sent ${beatSends}\n`,
  );
  if (beat.exitCode === null) {
    const exited = new Promise((r) => beat.once('exit', r));
    beat.kill('SIGTERM');
    await exited;
  }
  await h.app.shutdown().catch(() => undefined);
  await node.remove();
  if (keys.length > 0) await redis.del(...keys.flatMap((k) => [`${k}:started`, `${k}:done`]));
  await redis.del(beatStore);
  await closeRunCounter();
}, 60_000);

function work(key: string, eta?: string) {
  const id = randomUUID();
  return {
    body: Buffer.from(JSON.stringify([[], { key, ms: 40 }, {}])),
    options: {
      persistent: true,
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      correlationId: id,
      headers: { lang: 'py', task: 'fault.work', id, root_id: id, retries: 0, eta: eta ?? null },
    },
  };
}

const publish = (messages: ReturnType<typeof work>[]) => publishMany(h.queue, messages, node.url);

async function consumedQueues(): Promise<string[]> {
  return (await node.ctl('list_consumers', '-q', 'queue_name'))
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

async function pythonPing(): Promise<string> {
  const code = `
import sys
from celery import Celery
print(sorted(Celery(broker=sys.argv[1]).control.ping(timeout=3)))`;
  return (await exec(PYTHON, ['-c', code, node.url], { timeout: 30_000 })).stdout;
}

/** 1,250 tasks published, the fault once 150 of them ran, then every check of the file's header. */
async function underLoad(fault: () => Promise<void>): Promise<{ done: number; runs: number; doneAtFault: number }> {
  const key = uniqueName('rabbit');
  keys.push(key, `${key}:eta`);
  const reconnectsBefore = disconnects;
  await publish(Array.from({ length: PER_FAULT }, () => work(key)));
  await waitFor(async () => (await redis.hlen(`${key}:done`)) >= 150, 60_000, 10);
  const sendsBefore = beatSends;
  await fault();
  // The fault has taken effect (each command returns once it has): the rest must still have been to run.
  const doneAtFault = await redis.hlen(`${key}:done`);
  expect(doneAtFault).toBeLessThan(PER_FAULT);
  await waitFor(async () => (await redis.hlen(`${key}:done`)) >= PER_FAULT, 120_000, 100);
  const runs = Object.values(await redis.hgetall(`${key}:done`))
    .map(Number)
    .reduce((a, b) => a + b, 0);
  const done = await redis.hlen(`${key}:done`);
  completed += done;
  // Consuming again: the task queue and the pidbox, and the pidbox answers.
  await waitFor(
    async () => {
      const qs = await consumedQueues();
      return qs.includes(h.queue) && qs.some((q) => q.startsWith(h.queue) && q.endsWith('.celery.pidbox'));
    },
    60_000,
    250,
  );
  expect(await pythonPing()).toContain(h.queue);
  // The delay topology: a countdown of 3 s is parked in the broker and comes back.
  await publish([work(`${key}:eta`, new Date(Date.now() + 3000).toISOString())]);
  await waitFor(async () => (await redis.hlen(`${key}:eta:done`)) === 1, 30_000, 100);
  // Beat holds its lock again (it sends only while it does).
  await waitFor(() => beatSends >= sendsBefore + 2, 60_000, 100);
  expect(disconnects).toBeGreaterThan(reconnectsBefore);
  return { done, runs, doneAtFault };
}

function report(fault: string, r: { done: number; runs: number; doneAtFault: number }): void {
  process.stdout.write(
    `${fault}: published ${PER_FAULT}, completed before it took effect ${r.doneAtFault}, completed ${r.done}, runs ${r.runs} (redelivered after the fault ${r.runs - r.done}), lost ${PER_FAULT - r.done}, Beat sends ${beatSends}\n`,
  );
}

test(`own wiring: stop_app / start_app with ${PER_FAULT} tasks in flight: ${PER_FAULT} of ${PER_FAULT} complete, queue and pidbox consumed again, countdown and Beat go on`, async () => {
  const r = await underLoad(async () => {
    await node.ctl('stop_app');
    await new Promise((res) => setTimeout(res, 2000));
    await node.ctl('start_app');
  });
  report('stop_app/start_app', r);
  expect(r.done).toBe(PER_FAULT);
}, 240_000);

test(`own wiring: a full stop and start of the node with ${PER_FAULT} tasks in flight: ${PER_FAULT} of ${PER_FAULT} complete, queue and pidbox consumed again, countdown and Beat go on`, async () => {
  const r = await underLoad(async () => {
    await node.stop();
    await node.start();
  });
  report('node stop/start', r);
  expect(r.done).toBe(PER_FAULT);
}, 240_000);

test(`own wiring: close_all_connections with ${PER_FAULT} tasks in flight: ${PER_FAULT} of ${PER_FAULT} complete, queue and pidbox consumed again, countdown and Beat go on`, async () => {
  const r = await underLoad(async () => {
    await node.ctl('close_all_connections', 'fault test');
  });
  report('close_all_connections', r);
  expect(r.done).toBe(PER_FAULT);
}, 240_000);

test(`own wiring: a channel error from the broker (406 unknown delivery tag on the consume channel) with ${PER_FAULT} tasks in flight: ${PER_FAULT} of ${PER_FAULT} complete, consumed again`, async () => {
  const r = await underLoad(async () => {
    // The broker's channel process handles a basic.ack it never delivered as the client's, and closes that
    // channel (not the connection) with 406: the same close a client bug or consumer_timeout gets.
    const out = await node.ctl(
      'eval',
      "[rabbit_channel:do(P, {'basic.ack', 999999999, false}) || P <- rabbit_channel:list(), proplists:get_value(consumer_count, rabbit_channel:info(P, [consumer_count])) > 0].",
    );
    expect(out).toContain('ok');
  });
  report('channel error', r);
  expect(r.done).toBe(PER_FAULT);
  expect(completed).toBe(PER_FAULT * 4);
}, 240_000);
