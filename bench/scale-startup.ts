/**
 * The scale benchmark's start-up: process start → the first message taken off a queue holding N (cloned
 * celery.accumulate), our worker without mingle against the bare amqplib consumer (bare-consumer.ts) at the
 * same prefetch, alternated, on a RabbitMQ node of its own.
 *
 *   npm run build && node dist/bench/scale-startup.js [backlog=1000000] [rounds=5]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { DEFAULT_CONCURRENCY } from '../lib/app/worker-settings.js';
import amqp from '../lib/broker/amqp/amqplib.js';
import { startRabbitNode } from './rabbit-node.js';
import { publishAmqp } from './raw-publish.js';
import { record, type Sample } from './record.js';
import { rotated, summarize } from './stats.js';
import { REPETITION, sleep, stop } from './support.js';

const backlog = Number(process.argv[2] ?? 1_000_000);
const rounds = Number(process.argv[3] ?? 5);
const QUEUE = 'bench_scale_startup';
const node = await startRabbitNode();
const env = { ...process.env, CELERY_BROKER_URL: node.url, BENCH_AMQP_URL: node.url };
const systems: [string, () => ChildProcess][] = [
  [
    'smarter-worker',
    () =>
      spawn(process.execPath, ['dist/tasks/main.js', '-Q', QUEUE, '-l', 'warning', '--without-mingle'], {
        env,
        stdio: 'ignore',
      }),
  ],
  [
    'bare consumer',
    () =>
      spawn(process.execPath, ['dist/bench/bare-consumer.js', QUEUE, '0', String(DEFAULT_CONCURRENCY * 4)], {
        env,
        stdio: 'ignore',
      }),
  ],
];
const conn = await amqp.connect(node.url);
conn.on('error', () => undefined);
const samples: Sample[] = [];
let child: ChildProcess | undefined;
try {
  const ch = await conn.createChannel();
  await ch.assertQueue(QUEUE, { durable: true });
  await publishAmqp(node.url, QUEUE, backlog);
  process.stderr.write(`${backlog} waiting in ${QUEUE}\n`);
  for (let i = 0; i < rounds; i++) {
    for (const [system, start] of rotated(systems, REPETITION + i)) {
      const before = (await ch.checkQueue(QUEUE)).messageCount;
      const t0 = performance.now();
      child = start();
      while ((await ch.checkQueue(QUEUE)).messageCount >= before) {
        if (child.exitCode !== null) throw new Error(`${system} exited with ${child.exitCode} before taking a task`);
        await sleep(2);
      }
      const ms = performance.now() - t0;
      samples.push({ bench: 'scale-startup', system, metric: 'start → first task', unit: 'ms', value: ms, x: backlog });
      process.stderr.write(`  ${system}: ${ms.toFixed(0)} ms\n`);
      await stop(child);
      child = undefined;
      // What it took and did not ack is back in the queue once its consumer is gone.
      while ((await ch.checkQueue(QUEUE)).consumerCount > 0) await sleep(10);
    }
  }
} finally {
  if (child) await stop(child);
  await conn.close().catch(() => undefined);
  await node.remove();
}
record(samples);
process.stdout.write(
  `\nprocess start → first task taken, ${backlog} waiting, ${rounds} rounds alternated\n\n| system | median ms | min – max ms |\n|---|---:|---:|\n`,
);
for (const [system] of systems) {
  const s = summarize(samples.filter((x) => x.system === system).map((x) => x.value));
  process.stdout.write(`| ${system} | ${s.median.toFixed(0)} | ${s.min.toFixed(0)} – ${s.max.toFixed(0)} |\n`);
}
