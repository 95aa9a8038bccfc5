/**
 * SMARTER_WORKER_CONTROL=inspect seen from Debian's real `celery` CLI: ping and every inspect command
 * still answer; shutdown, terminate, revoke, rate_limit, time_limit, add_consumer and cancel_consumer get a
 * Celery-shaped `{"error": …}` reply and a log line, and change nothing. An explicit list lets one back in.
 * And a control message that used to kill the worker process (an invalid pcre pattern) is dropped.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { promisify } from 'node:util';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { AMQP_URL, REDIS_URL, deleteQueues, uniqueName } from '../support/amqp.js';
import { type Harness, startWorker } from '../support/harness.js';
import { type LogLine, recordingLogger } from '../support/logs.js';
import { ResultReader } from '../support/results.js';
import { PYTHON } from '../support/python-worker.js';
import { waitFor } from '../support/wait.js';

const exec = promisify(execFile);
const celery = async (...args: string[]) =>
  (await exec(PYTHON, ['-m', 'celery', '-b', AMQP_URL, ...args], { timeout: 60_000 })).stdout;

/** One broadcast from kombu with a reply, as `app.control.broadcast` sends it: the raw reply list. */
async function broadcast(node: string, method: string, args: Record<string, unknown>): Promise<unknown> {
  const code = `
import json, sys
from celery import Celery
app = Celery(broker=sys.argv[1])
print(json.dumps(app.control.broadcast(sys.argv[3], arguments=json.loads(sys.argv[4]), reply=True, destination=[sys.argv[2]], timeout=3)))`;
  const { stdout } = await exec(PYTHON, ['-c', code, AMQP_URL, node, method, JSON.stringify(args)], {
    timeout: 60_000,
  });
  return JSON.parse(stdout);
}

let h: Harness;
let node: string;
const lines: LogLine[] = [];
const results = new ResultReader();
const extraQueue = uniqueName('q_extra');
beforeAll(async () => {
  h = await startWorker({
    env: { CELERY_RESULT_BACKEND: REDIS_URL, SMARTER_WORKER_CONTROL: 'inspect' },
    logger: recordingLogger(lines),
  });
  node = h.worker.options.nodeName;
});
afterAll(async () => {
  await h.stop();
  await results.close();
  await deleteQueues([extraQueue]);
});

test('own wiring: with SMARTER_WORKER_CONTROL=inspect, celery inspect ping, stats, registered, active_queues and conf still answer', async () => {
  expect(JSON.parse(await celery('inspect', 'ping', '-d', node, '-j'))).toEqual({ [node]: { ok: 'pong' } });
  const stats = (
    JSON.parse(await celery('inspect', 'stats', '-d', node, '-j')) as Record<string, Record<string, unknown>>
  )[node];
  expect(stats).toMatchObject({ pid: process.pid, prefetch_count: 16 });
  expect(
    (JSON.parse(await celery('inspect', 'registered', '-d', node, '-j')) as Record<string, string[]>)[node],
  ).toContain('test.add');
  expect(
    (JSON.parse(await celery('inspect', 'active_queues', '-d', node, '-j')) as Record<string, Array<{ name: string }>>)[
      node
    ]?.map((q) => q.name),
  ).toEqual([h.queue]);
  expect(JSON.parse(await celery('inspect', 'conf', '-d', node, '-j'))).toHaveProperty(node);
});

test.each([
  ['shutdown', {}],
  ['terminate', { task_id: 'x', signal: 'SIGTERM' }],
  ['revoke', { task_id: 'x' }],
  ['rate_limit', { task_name: 'test.add', rate_limit: '1/m' }],
  ['time_limit', { task_name: 'test.add', soft: 1, hard: 2 }],
  ['add_consumer', { queue: extraQueue }],
  ['cancel_consumer', { queue: 'whatever' }],
])(
  'own wiring: with SMARTER_WORKER_CONTROL=inspect, %s is refused with an error reply and a log line, and changes nothing',
  async (method, args) => {
    const reply = await broadcast(node, method, args);
    expect(reply).toEqual([
      { [node]: { error: `control command ${method} is turned off on this worker (SMARTER_WORKER_CONTROL=inspect)` } },
    ]);
    expect(lines.some((l) => l.level === 'warn' && l.message.includes(`refused control command ${method}`))).toBe(true);
    expect(h.worker.state).toBe('RUNNING');
    expect(h.worker.activeQueues()).toEqual([h.queue]);
    expect(h.worker.revoked.has('x')).toBe(false);
  },
);

test('own wiring: with SMARTER_WORKER_CONTROL=inspect, celery control shutdown leaves the worker running and serving', async () => {
  await celery('control', 'shutdown', '-d', node).catch(() => '');
  const id = await h.worker.publisher.apply('test.add', [20, 22], {});
  expect((await results.ready(id)).result).toBe(42);
  expect(JSON.parse(await celery('inspect', 'ping', '-d', node, '-j'))).toEqual({ [node]: { ok: 'pong' } });
});

test('own wiring: SMARTER_WORKER_CONTROL=revoke allows revoke (a revoked id is discarded) and still refuses shutdown', async () => {
  const other = await startWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL, SMARTER_WORKER_CONTROL: 'revoke' } });
  try {
    const otherNode = other.worker.options.nodeName;
    const id = randomUUID();
    expect(await celery('control', 'revoke', id, '-d', otherNode)).toContain('flagged as revoked');
    expect(other.worker.revoked.has(id)).toBe(true);
    const reply = await broadcast(otherNode, 'shutdown', {});
    expect(reply).toEqual([
      {
        [otherNode]: {
          error: 'control command shutdown is turned off on this worker (SMARTER_WORKER_CONTROL=inspect,revoke)',
        },
      },
    ]);
    expect(other.worker.state).toBe('RUNNING');
  } finally {
    await other.stop();
  }
});

test('own wiring: a control message whose pcre pattern is no regular expression is dropped; the worker process lives and still answers ping', async () => {
  const queue = uniqueName('q_pcre');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'spec/support/worker-main.ts', '-Q', queue, '-c', '2', '-n', `${queue}@%h`],
    {
      env: { ...process.env, CELERY_BROKER_URL: AMQP_URL, CELERY_RESULT_BACKEND: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  try {
    const otherNode = `${queue}@${os.hostname()}`;
    await waitFor(() => out.includes(`${otherNode} ready`), 20_000, { stepMs: 100, what: `${otherNode} ready` });
    const conn = await amqp.connect(AMQP_URL);
    const ch = await conn.createConfirmChannel();
    const request = {
      method: 'ping',
      arguments: {},
      pattern: '(unclosed',
      matcher: 'pcre',
      ticket: randomUUID(),
      reply_to: { exchange: 'reply.celery.pidbox', routing_key: randomUUID() },
    };
    ch.publish('celery.pidbox', '', Buffer.from(JSON.stringify(request)), { contentType: 'application/json' });
    await ch.waitForConfirms();
    await conn.close();
    await new Promise((r) => setTimeout(r, 1000));
    expect({ exited: child.exitCode }).toEqual({ exited: null });
    expect(JSON.parse(await celery('inspect', 'ping', '-d', otherNode, '-j'))).toEqual({ [otherNode]: { ok: 'pong' } });
    expect(out).toContain('dropped a control message with an invalid pattern');
  } finally {
    child.kill('SIGKILL');
    await deleteQueues([queue]);
  }
});
