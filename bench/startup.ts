/**
 * The start-up benchmark: process start → consuming an empty queue (the broker reports a consumer),
 * smarter-worker with no flag but -Q against Node + amqplib alone (bench/bare-consumer.ts), alternated.
 *
 *   npm run build && node dist/bench/startup.js [rounds=5]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { record, type Sample } from './record.js';
import { summarize } from './stats.js';
import { AMQP_URL, deleteQueue, freshQueue, timeToConsuming, withChannel } from './support.js';

const rounds = Number(process.argv[2] ?? 5);
const queue = `bench_startup_${process.pid}`;
const env = { ...process.env, CELERY_BROKER_URL: AMQP_URL };
// Mingle waits Celery's 1 s for other workers' replies before consuming; the bare consumer has no such sync,
// so the comparison is of the start itself (the Python benchmarks pass --without-mingle too).
const systems: Record<string, () => ChildProcess> = {
  'smarter-worker': () =>
    spawn(process.execPath, ['dist/tasks/main.js', '-Q', queue, '-l', 'warning', '--without-mingle'], {
      env,
      stdio: 'ignore',
    }),
  'node + amqplib': () =>
    spawn(process.execPath, ['dist/bench/bare-consumer.js', queue, '0', '100'], { env, stdio: 'ignore' }),
};

await freshQueue(queue);
const samples: Sample[] = [];
await withChannel(async (ch) => {
  for (let i = 0; i < rounds; i++) {
    for (const [system, start] of Object.entries(systems)) {
      samples.push({
        bench: 'startup',
        system,
        metric: 'start → consuming',
        unit: 'ms',
        value: await timeToConsuming(ch, queue, system, start),
      });
    }
  }
});
await deleteQueue(queue);
record(samples);

process.stdout.write(
  `\nprocess start → consuming an empty queue, ${rounds} rounds alternated\n\n| system | median ms | min – max ms |\n|---|---:|---:|\n`,
);
for (const system of Object.keys(systems)) {
  const s = summarize(samples.filter((x) => x.system === system).map((x) => x.value));
  process.stdout.write(`| ${system} | ${s.median.toFixed(0)} | ${s.min.toFixed(0)} – ${s.max.toFixed(0)} |\n`);
}
