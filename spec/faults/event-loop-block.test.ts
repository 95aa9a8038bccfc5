/**
 * A task that holds the event loop for 2 s (a synchronous loop): the worker reports it (a warn line naming the
 * task, a metric, /healthz 200 "degraded", not a 503), its AMQP connection with a 2 s heartbeat survives (the
 * broker does not close it, nor does the client give up on the broker), and the other tasks run once it returns.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { celeryMessage, publishMany, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { faultTasks } from '../support/fault-tasks.js';
import { type Harness, startWorker } from '../support/harness.js';
import { recordingLogger } from '../support/logs.js';
import { freePort } from '../support/rabbit-node.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';

const exec = promisify(execFile);
const HEARTBEAT = 2;
const BLOCK_MS = 2000;
const OTHERS = 200;
const logger = recordingLogger();
const counter = runCounter();
let h: Harness;
let base: string;
let disconnects = 0;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  h = await startWorker({
    logger,
    tasks: (q) => faultTasks(q),
    env: {
      SMARTER_WORKER_HTTP_PORT: String(port),
      CELERY_BROKER_HEARTBEAT: String(HEARTBEAT),
      CELERY_WORKER_CONCURRENCY: '4',
    },
  });
  h.broker.on('disconnected', () => disconnects++);
  await waitFor(async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200, 15_000);
});

afterAll(async () => {
  await h.stop();
  await closeRunCounter();
});

/** The heartbeat RabbitMQ agreed with our connection (named after the worker's node). */
async function negotiatedHeartbeat(): Promise<number | undefined> {
  const { stdout } = await exec('rabbitmqctl', [
    'list_connections',
    'timeout',
    'client_properties',
    '-q',
    '--formatter',
    'json',
  ]);
  const conns = JSON.parse(stdout) as Array<{ timeout: number; client_properties: Array<[string, string, unknown]> }>;
  return conns.find((c) =>
    c.client_properties.some(([k, , v]) => k === 'connection_name' && typeof v === 'string' && v.startsWith(h.queue)),
  )?.timeout;
}

test(`own wiring: a task holding the event loop ${BLOCK_MS / 1000} s with ${OTHERS} others queued: 1 stall reported (log, metric, /healthz degraded 200), 0 reconnects at a ${HEARTBEAT} s heartbeat, ${OTHERS} of ${OTHERS} others complete`, async () => {
  const key = uniqueName('block');
  try {
    expect(await negotiatedHeartbeat()).toBe(HEARTBEAT);
    expect(await (await fetch(`${base}/healthz`)).text()).toBe('ok\n');
    const t0 = Date.now();
    await publishMany(h.queue, [
      celeryMessage('fault.block', { ms: BLOCK_MS }),
      ...Array.from({ length: OTHERS }, () => celeryMessage('fault.work', { key, ms: 10 })),
    ]);
    await waitFor(() => logger.lines.some((l) => l.message.startsWith('event loop blocked')), 15_000);
    await waitFor(async () => (await counter.hlen(`${key}:done`)) >= OTHERS, 30_000);
    const stall = logger.lines.find((l) => l.message.startsWith('event loop blocked'));
    const health = await fetch(`${base}/healthz`);
    const body = await health.text();
    const metrics = await (await fetch(`${base}/metrics`)).text();
    // Outlive a few more heartbeat intervals: a connection the broker judged dead would be closed by now.
    await new Promise((r) => setTimeout(r, 3 * HEARTBEAT * 1000));
    process.stdout.write(
      `event-loop block: ${stall?.message ?? 'no stall line'}; /healthz ${health.status} ${body.trim()}; reconnects ${disconnects}; others completed ${await counter.hlen(`${key}:done`)} of ${OTHERS} in ${Date.now() - t0} ms\n`,
    );
    expect(stall?.level).toBe('warn');
    expect(Number(stall?.meta.blocked_ms)).toBeGreaterThanOrEqual(BLOCK_MS - 150);
    expect(stall?.message).toContain('fault.block[');
    expect(health.status).toBe(200);
    expect(body).toMatch(/^degraded: event loop blocked for \d+ ms, \d+ s ago\n$/);
    expect(metrics).toMatch(/^smarter_worker_event_loop_stalls_total 1$/m);
    expect(metrics).toMatch(/^smarter_worker_event_loop_last_stall_seconds (1\.9|2)/m);
    expect(disconnects).toBe(0);
    expect(h.broker.connected).toBe(true);
    expect(await negotiatedHeartbeat()).toBe(HEARTBEAT);
    expect(await counter.hlen(`${key}:done`)).toBe(OTHERS);
  } finally {
    await counter.del(`${key}:started`, `${key}:done`);
  }
}, 60_000);
