/**
 * The scale benchmark's parked countdowns, on a RabbitMQ node of its own: N celery.accumulate with a countdown
 * of an hour (cloned from one Python sent) wait in the queue; our worker (its defaults) takes them and parks
 * them in the delay levels. Intake time (first taken → all N in the levels), the worker's peak and settled RSS,
 * the node's memory before and with them; then `smarter-worker delayed` (list), `delayed release --queue` and,
 * on N parked again, `delayed purge --queue`, each timed from process start to exit.
 *
 *   npm run build && node dist/bench/scale-park.js [count=100000]
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import amqp from '../lib/broker/amqp/amqplib.js';
import { DELAY_LEVELS } from '../lib/broker/amqp/topology.js';
import { parkCountdowns } from './park-countdowns.js';
import { rabbitMemoryMb } from './rabbit-memory.js';
import { startRabbitNode } from './rabbit-node.js';
import { publishAmqp } from './raw-publish.js';
import { record, type Sample } from './record.js';
import { ourDrainWorker, peakRssMb, rssMb, sleep, stop } from './support.js';

const exec = promisify(execFile);
const count = Number(process.argv[2] ?? 100_000);
const QUEUE = 'bench_scale_park';
const SYSTEM = 'smarter-worker';
const node = await startRabbitNode();
const env = { ...process.env, CELERY_BROKER_URL: node.url };
const conn = await amqp.connect(node.url);
conn.on('error', () => undefined);
const samples: Sample[] = [];
const sample = (metric: string, unit: string, value: number) => {
  samples.push({ bench: 'scale-park', system: SYSTEM, metric, unit, value, x: count });
  process.stderr.write(`  ${metric}: ${Number.isInteger(value) ? value : value.toFixed(2)} ${unit}\n`);
};
/** A queue's counts, none while it does not exist (a channel of its own: a failed check closes it). */
const check = async (queue: string) => {
  const probe = await conn.createChannel();
  probe.on('error', () => undefined);
  try {
    return await probe.checkQueue(queue);
  } catch {
    return { messageCount: 0, consumerCount: 0 };
  } finally {
    await probe.close().catch(() => undefined);
  }
};
/** Countdowns in the delay levels (declared at the first park). */
const parked = async () => {
  let n = 0;
  for (let level = 0; level < DELAY_LEVELS; level++) n += (await check(`celery_delayed_${level}`)).messageCount;
  return n;
};
const consumers = async () => (await check(QUEUE)).consumerCount;
/** The CLI against this node, timed from process start to exit, in seconds. */
const cli = async (...args: string[]) => {
  const t = performance.now();
  await exec(process.execPath, ['dist/tasks/main.js', 'delayed', ...args], { env, maxBuffer: 1 << 24 });
  return (performance.now() - t) / 1000;
};

let worker: ChildProcess | undefined;
try {
  // A first start declares the queue; the countdowns then wait for the second.
  worker = ourDrainWorker(QUEUE, [], env);
  while ((await consumers()) === 0) {
    if (worker.exitCode !== null) throw new Error(`the worker exited with ${worker.exitCode}`);
    await sleep(100);
  }
  await stop(worker);
  while ((await consumers()) > 0) await sleep(50);
  sample('node memory, empty', 'MB', Math.round((await rabbitMemoryMb(node.node)).total ?? NaN));
  await publishAmqp(node.url, QUEUE, count, 3600);
  process.stderr.write(`${count} countdowns of an hour waiting in ${QUEUE}\n`);

  worker = ourDrainWorker(QUEUE, [], env);
  let t0: number | undefined;
  for (const until = Date.now() + 600_000 + count * 10; ;) {
    const now = performance.now();
    if (t0 === undefined && (await check(QUEUE)).messageCount < count) t0 = now;
    if (t0 !== undefined && (await parked()) >= count) break;
    if (Date.now() > until) throw new Error('the countdowns were not all parked');
    await sleep(100);
  }
  const intake = (performance.now() - (t0 ?? 0)) / 1000;
  sample('intake', 's', intake);
  sample('intake rate', '1/s', count / intake);
  sample('worker peak RSS', 'MB', worker.pid ? peakRssMb(worker.pid) : NaN);
  await sleep(3000);
  sample('worker settled RSS', 'MB', rssMb(worker.pid));
  sample('node memory, parked', 'MB', Math.round((await rabbitMemoryMb(node.node)).total ?? NaN));
  await stop(worker);

  sample('`delayed` (list)', 's', await cli());
  sample('`delayed release --queue`', 's', await cli('release', '--queue', QUEUE));
  await (await conn.createChannel()).purgeQueue(QUEUE);
  await parkCountdowns(node.url, QUEUE, count);
  sample('`delayed purge --queue`', 's', await cli('purge', '--queue', QUEUE));
} finally {
  if (worker) await stop(worker);
  await conn.close().catch(() => undefined);
  await node.remove();
}
record(samples);
process.stdout.write(
  `\n${count} countdowns parked by our worker, on a RabbitMQ node of its own\n\n| metric | value |\n|---|---:|\n`,
);
for (const s of samples) {
  process.stdout.write(`| ${s.metric} (${s.unit}) | ${s.value.toFixed(s.unit === 's' ? 2 : 0)} |\n`);
}
