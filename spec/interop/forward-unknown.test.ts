/**
 * A migration: our worker in front of a queue, Debian's Python Celery worker on a fallback queue with the
 * tasks ours does not implement. A Python caller sends those tasks to the front queue; our worker forwards
 * them unchanged (reply_to and correlation_id included) and the caller's `.get()` returns the Python
 * worker's result, with the Redis backend and with rpc://.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { FORWARDED_BY_HEADER } from '../../lib/worker/intake/forward.js';
import { AMQP_URL, REDIS_URL, deleteQueues, publishRaw, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type Harness, startWorker } from '../support/harness.js';
import { type LogLine, recordingLogger } from '../support/logs.js';
import { freePort } from '../support/rabbit-node.js';
import { PYTHON, spawnPythonWorker } from '../support/python-worker.js';

const run = promisify(execFile);

function startFallback(queue: string, backend: string): ChildProcess {
  return spawnPythonWorker({
    app: 'fallback',
    queue,
    node: `${queue}@%h`,
    env: { CELERY_BROKER_URL: AMQP_URL, CELERY_RESULT_BACKEND: backend },
  });
}

async function stop(p: ChildProcess | undefined): Promise<void> {
  if (!p || p.exitCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  await exited;
}

async function caller(
  backend: string,
  queue: string,
  count: number,
): Promise<{ single: Record<string, unknown>; many?: unknown[] }> {
  const { stdout } = await run(
    PYTHON,
    ['spec/interop/python/forward_client.py', AMQP_URL, backend, queue, String(count)],
    {
      timeout: 180_000,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return JSON.parse(stdout) as { single: Record<string, unknown>; many?: unknown[] };
}

const forwardLines = (lines: LogLine[]) => lines.filter((l) => l.message.startsWith('forwarding task '));

describe.each([
  ['redis', REDIS_URL],
  ['rpc', 'rpc://'],
])('own wiring: with the %s result backend', (_name, backend) => {
  let h: Harness | undefined;
  let py: ChildProcess | undefined;
  const fallback = uniqueName('fallback');
  const lines: LogLine[] = [];

  beforeAll(async () => {
    // An HTTP port: the worker keeps Prometheus metrics only when it serves them.
    const http = { SMARTER_WORKER_HTTP_PORT: String(await freePort()), SMARTER_WORKER_HTTP_HOST: '127.0.0.1' };
    h = await startWorker({
      env: { CELERY_RESULT_BACKEND: backend, SMARTER_WORKER_UNKNOWN_TASKS: `forward:${fallback}`, ...http },
      logger: recordingLogger(lines),
    });
    py = startFallback(fallback, backend);
  });
  afterAll(async () => {
    await stop(py);
    await h?.stop();
    await deleteQueues([fallback, `${fallback}.dead_letter`]);
  });

  test("a Python caller's .get() returns the result of the Python worker behind ours", async () => {
    const out = await caller(backend, h!.queue, 0);
    expect(out.single).toEqual({
      domain: 'example.com',
      worker: 'python',
      queue: fallback,
      forwarded_by: h!.worker.options.nodeName,
    });
    // A forwarded name is not ours: Celery's own `inspect registered` does not list it.
    const node = h!.worker.options.nodeName;
    const { stdout } = await run(PYTHON, ['-m', 'celery', '-b', AMQP_URL, 'inspect', 'registered', '-d', node, '-j'], {
      timeout: 60_000,
    });
    const registered = (JSON.parse(stdout) as Record<string, string[]>)[node];
    expect(registered).toContain('test.add');
    expect(registered).not.toContain('legacy.verify_domain');
  }, 90_000);

  if (backend === REDIS_URL) {
    test('1,000 forwarded messages give 1,000 results, and each forwarded name is logged once', async () => {
      const out = await caller(backend, h!.queue, 1000);
      const many = out.many ?? [];
      expect(many).toHaveLength(1000);
      many.forEach((r, i) => {
        if (i % 2 === 0) expect(r).toBe(i * 2);
        else expect(r).toMatchObject({ domain: `d${i}.example`, worker: 'python' });
      });
      expect(
        forwardLines(lines)
          .map((l) => l.meta.task)
          .sort(),
      ).toEqual(['legacy.double', 'legacy.verify_domain']);
      const metrics = await h!.app.metrics!.registry.getSingleMetricAsString('smarter_worker_forwarded_total');
      // 500 here and one single call in each test of this backend.
      expect(metrics).toContain(`smarter_worker_forwarded_total{task="legacy.double",to="${fallback}"} 500`);
      expect(metrics).toContain(`smarter_worker_forwarded_total{task="legacy.verify_domain",to="${fallback}"} 502`);
    }, 240_000);
  }
});

test('own wiring: a forwarding loop (the fallback is the front queue itself) ends in the dead-letter queue, forwarded once', async () => {
  const queue = uniqueName('q');
  const lines: LogLine[] = [];
  const h = await startWorker({
    queue,
    env: { SMARTER_WORKER_UNKNOWN_TASKS: `forward:${queue}` },
    logger: recordingLogger(lines),
  });
  try {
    const id = randomUUID();
    await publishRaw(queue, JSON.stringify([[1], {}, {}]), {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      correlationId: id,
      replyTo: 'caller-reply-queue',
      headers: { lang: 'py', task: 'legacy.nowhere', id, root_id: id, retries: 0 },
    });
    const dead = await waitFor(
      () => withChannel(async (ch) => (await ch.get(`${queue}.dead_letter`, { noAck: true })) || undefined),
      15_000,
    );
    const headers = dead.properties.headers as Record<string, unknown>;
    expect(String(headers['x-dead-letter-reason'])).toMatch(
      /^forwarding loop: legacy\.nowhere was already forwarded by /,
    );
    expect(headers[FORWARDED_BY_HEADER]).toBe(h.worker.options.nodeName);
    expect(dead.properties).toMatchObject({ correlationId: id, replyTo: 'caller-reply-queue' });
    // Nothing is left going round.
    await new Promise((r) => setTimeout(r, 500));
    expect(await withChannel(async (ch) => (await ch.checkQueue(queue)).messageCount)).toBe(0);
    expect([...(h.worker.forwarder?.counts.values() ?? [])]).toEqual([1]);
    expect(forwardLines(lines)).toHaveLength(1);
  } finally {
    await h.stop();
  }
}, 60_000);

test('own wiring: a forwarded message is the original, byte for byte and property for property, plus the forwarding mark', async () => {
  const to = uniqueName('fallback');
  const h = await startWorker({ env: { SMARTER_WORKER_UNKNOWN_TASKS: `forward:${to}` } });
  try {
    const id = randomUUID();
    const body = Buffer.from(
      JSON.stringify([
        [1, 'two'],
        { k: { nested: [3] } },
        { callbacks: null, errbacks: null, chain: null, chord: null },
      ]),
    );
    const headers = {
      lang: 'py',
      task: 'legacy.anything',
      id,
      root_id: id,
      parent_id: null,
      retries: 0,
      eta: null,
      expires: null,
      'x-custom': 'kept',
    };
    // Every AMQP property a Python producer can set, each to be forwarded as it came.
    const properties = {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      correlationId: id,
      replyTo: 'caller.reply.queue',
      priority: 7,
      deliveryMode: 2,
      expiration: '600000',
      messageId: 'm-1',
      timestamp: 1733000000,
      type: 'legacy',
      appId: 'smarter',
      userId: 'guest',
    };
    await publishRaw(h.queue, body, { ...properties, headers });
    const got = await waitFor(
      () => withChannel(async (ch) => (await ch.get(to, { noAck: true })) || undefined),
      15_000,
    );
    expect(got.content.equals(body)).toBe(true);
    expect(got.properties).toMatchObject(properties);
    expect(got.properties.headers).toEqual({
      ...headers,
      'x-smarter-forwarded-by': h.worker.options.nodeName,
      'x-smarter-forwarded-from': h.queue,
    });
    // Acked once forwarded: nothing left on the front queue, nothing dead-lettered.
    expect(
      await withChannel(async (ch) => [
        (await ch.checkQueue(h.queue)).messageCount,
        (await ch.checkQueue(`${h.queue}.dead_letter`).catch(() => ({ messageCount: 0 }))).messageCount,
      ]),
    ).toEqual([0, 0]);
  } finally {
    await h.stop();
    await deleteQueues([to]);
  }
}, 60_000);
