/**
 * Every metric the chart's alerts and dashboard query (charts/smarter-worker/files/) is exported: read from
 * /metrics of a running worker and of a running smarter-beat, on the shared RabbitMQ, with queues of the test's
 * own. A metric renamed in the code, or a query with a typo, fails here rather than in an empty panel or an
 * alert that can never fire.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { retireQueues } from '../../bench/retire-queue.js';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { alertExpressions, dashboardQueries, metricNames } from '../support/chart.js';
import { terminate } from '../support/child.js';
import { freePort } from '../support/rabbit-node.js';

const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672//';
const id = randomUUID().slice(0, 8);
const queue = `metrics_exported_${id}`;
const beatQueues = [`metrics_beat_op_${id}`, `metrics_beat_infra_${id}`];
let worker: ChildProcess | undefined;
let beat: ChildProcess | undefined;
let workerPort = 0;
let beatPort = 0;
const dir = mkdtempSync(path.join(os.tmpdir(), 'metrics-exported-'));

beforeAll(async () => {
  workerPort = await freePort();
  beatPort = await freePort();
  worker = spawn(process.execPath, ['--import', 'tsx', 'spec/support/fault-worker-main.ts', '-Q', queue, '-c', '2'], {
    env: {
      ...process.env,
      CELERY_BROKER_URL: AMQP_URL,
      CELERY_RESULT_BACKEND: '',
      SMARTER_WORKER_HTTP_PORT: String(workerPort),
      SMARTER_WORKER_HTTP_HOST: '127.0.0.1',
      // Its own canary lock and queue are not settings; on the shared broker another worker may hold the lock,
      // which changes the holder gauge's value, not whether the metrics exist.
      SMARTER_WORKER_DELAY_CANARY_INTERVAL: '1',
      SMARTER_WORKER_DELAY_CANARY_LEVELS: '0',
    },
    stdio: 'ignore',
  });
  beat = spawn(process.execPath, ['--import', 'tsx', 'beat/main.ts'], {
    env: {
      ...process.env,
      CELERY_BROKER_URL: AMQP_URL,
      SMARTER_BEAT_HTTP_PORT: String(beatPort),
      SMARTER_BEAT_SCHEDULE_FILE: path.join(dir, 'schedule.json'),
      SMARTER_BEAT_LOCK: `metrics_beat_lock_${id}`,
      SMARTER_BEAT_REDIS_URL: '',
      CELERY_REDBEAT_REDIS_URL: '',
      SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE: beatQueues[0],
      SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE: beatQueues[1],
    },
    stdio: 'ignore',
  });
}, 60_000);

afterAll(async () => {
  await terminate(worker);
  await terminate(beat);
  const conn = await amqp.connect(AMQP_URL);
  await retireQueues(conn, [queue, `${queue}.dead_letter`, ...beatQueues]).catch(() => undefined);
  await conn.close();
  rmSync(dir, { recursive: true, force: true });
});

async function scrape(port: number, ready: (text: string) => boolean): Promise<string> {
  const t0 = Date.now();
  for (;;) {
    const text = await fetch(`http://127.0.0.1:${port}/metrics`)
      .then((r) => r.text())
      .catch(() => '');
    if (ready(text)) return text;
    if (Date.now() - t0 > 60_000) {
      throw new Error(`/metrics on port ${port} not ready in 60 s:\n${text.slice(0, 2000)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The names /metrics declares (`# TYPE`), with a histogram's _bucket, _sum and _count. */
function exported(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(m[1]!);
    if (m[2] === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(m[1]! + s);
  }
  return names;
}

test('own wiring: every metric queried by an alert or a dashboard panel is exported by the worker or Beat', async () => {
  // Its queue gauge is filled as soon as the queue is declared, a moment before the worker consumes it: both.
  const workerText = await scrape(
    workerPort,
    (t) =>
      new RegExp(`^smarter_worker_queue_messages\\{queue="${queue}"\\} \\d+$`, 'm').test(t) &&
      /^smarter_worker_ready 1$/m.test(t),
  );
  const beatText = await scrape(beatPort, (t) => t.includes('smarter_beat_lock_held'));
  const names = new Set([...exported(workerText), ...exported(beatText)]);
  const queried = [
    ...alertExpressions().map((a) => ({ where: `alert ${a.alert}`, expr: a.expr })),
    ...dashboardQueries().map((q) => ({ where: `panel "${q.panel}"`, expr: q.expr })),
  ];
  const missing = queried.flatMap((q) =>
    metricNames(q.expr)
      .filter((n) => !names.has(n))
      .map((n) => `${q.where}: ${n}`),
  );
  expect(queried.length).toBeGreaterThan(20);
  expect(missing).toEqual([]);
  // The worker's queue gauges carry real samples for the queue it consumes.
  expect(workerText).toMatch(new RegExp(`^smarter_worker_queue_consumers\\{queue="${queue}"\\} [1-9]`, 'm'));
  expect(workerText).toMatch(new RegExp(`^smarter_worker_dead_letter_messages\\{queue="${queue}"\\} 0$`, 'm'));
}, 120_000);

test('own wiring: the check itself: a name no process exports is reported', () => {
  expect(metricNames('sum(rate(smarter_worker_no_such_metric_total[5m])) / smarter_worker_ready')).toEqual([
    'smarter_worker_no_such_metric_total',
    'smarter_worker_ready',
  ]);
});
