/**
 * The scale benchmark's drains: a backlog of N celery.accumulate (cloned from one Python sent, raw-publish.ts)
 * drained by our worker at its defaults (late ack, results ignored), by the bare consumer of the same broker at
 * the same prefetch, and by Python Celery 5.2.6 prefork -c 2 up to `python-max`; per backlog: drain time, rate,
 * peak RSS and RSS settled after the drain. On a broker of its own: a RabbitMQ node (rabbit-node.ts) or a
 * redis-server on a free port, never the shared ones.
 *
 *   npm run build && node dist/bench/scale-drain.js rabbitmq|redis [sizes=10000,100000,1000000] [python-max=100000]
 *
 * BENCH_SCALE_NODE_FLAGS adds our worker started with those node flags as one more system, alternated with the
 * others: `--max-semi-space-size=16` gives it V8's own young generation (lib/app/heap-growth.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { topologyOn } from '../lib/broker/amqp/amqp-declare.js';
import amqp from '../lib/broker/amqp/amqplib.js';
import { delayTopology } from '../lib/broker/amqp/topology.js';
import { Redis } from 'ioredis';
import { DEFAULT_CONCURRENCY } from '../lib/app/worker-settings.js';
import { startRabbitNode } from './rabbit-node.js';
import { publishAmqp, publishRedis } from './raw-publish.js';
import { record, type Sample } from './record.js';
import { startRedisServer } from './redis-server.js';
import { rotated } from './stats.js';
import {
  type Left,
  REPETITION,
  cpuSeconds,
  helperThreadCpuSeconds,
  ourDrainWorker,
  peakRssMb,
  pythonDrainWorker,
  rssMb,
  sleep,
  stop,
  timeDrainOf,
} from './support.js';

const broker = process.argv[2] === 'redis' ? 'redis' : 'rabbitmq';
const sizes = (process.argv[3] ?? '10000,100000,1000000').split(',').map(Number);
const pythonMax = Number(process.argv[4] ?? 100_000);
const PREFETCH = DEFAULT_CONCURRENCY * 4;
const PYTHON_C = 2;
/** After the drain, idle this long before the settled RSS is read. */
const SETTLE_MS = 3000;
const bench = `scale-${broker}`;
const ALSO = (process.env.BENCH_SCALE_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);

/** What the drains need of a broker: fill a queue, read what is left of it, empty it. */
interface Backlog {
  url: string;
  fill(queue: string, n: number): Promise<void>;
  left(queue: string): Promise<Left>;
  clear(queue: string): Promise<void>;
  close(): Promise<void>;
  /** The broker's process, whose CPU a drain costs too. */
  pid: number | undefined;
}

async function rabbitBacklog(): Promise<Backlog> {
  const node = await startRabbitNode();
  const conn = await amqp.connect(node.url);
  // The delay levels exist on any broker a worker has run against. Made on this new node during our first drain,
  // they would cost the broker about half a second of CPU in that drain alone.
  await topologyOn(conn, delayTopology());
  const ch = await conn.createChannel();
  return {
    url: node.url,
    pid: node.pid(),
    async fill(queue, n) {
      await ch.assertQueue(queue, { durable: true });
      await publishAmqp(node.url, queue, n);
    },
    // Unacked messages are not seen through AMQP: the drain ends with the last window in flight.
    left: async (queue) => ({ ready: (await ch.checkQueue(queue)).messageCount, unacked: 0 }),
    async clear(queue) {
      await ch.deleteQueue(queue);
    },
    async close() {
      await conn.close().catch(() => undefined);
      await node.remove();
    },
  };
}

async function redisBacklog(): Promise<Backlog> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  return {
    url: server.url,
    pid: server.pid,
    fill: (queue, n) => publishRedis(server.url, redis, queue, n),
    async left(queue) {
      const [ready, unacked] = await Promise.all([redis.llen(queue), redis.hlen('unacked')]);
      return { ready, unacked };
    },
    async clear(queue) {
      await redis.del(queue, `_kombu.binding.${queue}`, 'unacked', 'unacked_index');
    },
    async close() {
      await redis.quit();
      await server.stop();
    },
  };
}

const backlog = broker === 'redis' ? await redisBacklog() : await rabbitBacklog();
const env = {
  ...process.env,
  CELERY_BROKER_URL: backlog.url,
  BENCH_AMQP_URL: backlog.url,
  BENCH_REDIS_URL: backlog.url,
};
const bare = broker === 'redis' ? 'dist/bench/bare-redis-consumer.js' : 'dist/bench/bare-consumer.js';
type Started = [string, (queue: string, n: number) => ChildProcess];
const also: Started[] =
  ALSO.length > 0 ? [[`smarter-worker ${ALSO.join(' ')}`, (q) => ourDrainWorker(q, [], env, ALSO)]] : [];
const systems: Started[] = [
  ['smarter-worker', (q) => ourDrainWorker(q, [], env)],
  ...also,
  [
    'bare consumer',
    (q, n) =>
      spawn(process.execPath, [bare, q, String(n), String(PREFETCH)], { env, stdio: ['ignore', 'ignore', 'inherit'] }),
  ],
  [`python-celery -c ${PYTHON_C}`, (q) => pythonDrainWorker(q, PYTHON_C, env)],
];

const samples: Sample[] = [];
let child: ChildProcess | undefined;
try {
  for (const n of sizes) {
    for (const [system, start] of rotated(systems, REPETITION)) {
      if (system.startsWith('python') && n > pythonMax) continue;
      const queue = `bench_scale_${system.replace(/\W+/g, '_')}`;
      const t = performance.now();
      await backlog.fill(queue, n);
      process.stderr.write(
        `${broker} ${n}: ${system} (published in ${((performance.now() - t) / 1000).toFixed(1)} s)\n`,
      );
      child = start(queue, n);
      const pid = child.pid;
      // CPU from the first message taken to the last settled: start-up is the start-up benchmark's.
      let cpu0 = { consumer: 0, broker: 0, helpers: 0 };
      const seconds = await timeDrainOf(
        queue,
        n,
        () => backlog.left(queue),
        600_000 + n * 5,
        () => {
          cpu0 = { consumer: cpuSeconds(pid), broker: cpuSeconds(backlog.pid), helpers: helperThreadCpuSeconds(pid) };
        },
      );
      const cpu = {
        consumer: cpuSeconds(pid) - cpu0.consumer,
        broker: cpuSeconds(backlog.pid) - cpu0.broker,
        helpers: helperThreadCpuSeconds(pid) - cpu0.helpers,
      };
      const peak = pid ? peakRssMb(pid) : NaN;
      await sleep(SETTLE_MS);
      const settled = rssMb(pid);
      await stop(child);
      await backlog.clear(queue);
      const at = { bench, system, x: n };
      samples.push(
        { ...at, metric: 'drain', unit: 's', value: seconds },
        { ...at, metric: 'tasks/s', unit: '1/s', value: n / seconds },
        { ...at, metric: 'peak RSS', unit: 'MB', value: peak },
        { ...at, metric: 'settled RSS', unit: 'MB', value: settled },
        { ...at, metric: 'CPU per task', unit: 'µs', value: (cpu.consumer / n) * 1e6 },
        { ...at, metric: 'broker CPU per task', unit: 'µs', value: (cpu.broker / n) * 1e6 },
      );
      // A node consumer's V8 helper threads (optimizing compiler, collector): its warm-up shows here.
      if (!system.startsWith('python')) {
        samples.push({ ...at, metric: 'V8 helper-thread CPU per task', unit: 'µs', value: (cpu.helpers / n) * 1e6 });
      }
      process.stderr.write(
        `  ${seconds.toFixed(2)} s, ${Math.round(n / seconds)}/s, RSS peak ${peak} MB, settled ${settled} MB, CPU ${cpu.consumer.toFixed(2)} s (V8 helper threads ${cpu.helpers.toFixed(2)} s, broker ${cpu.broker.toFixed(2)} s)\n`,
      );
    }
  }
} finally {
  if (child) await stop(child);
  await backlog.close();
}
record(samples);

process.stdout.write(
  `\n${broker}: backlogs drained, late ack; bare consumer and ours at prefetch ${PREFETCH}, Python -c ${PYTHON_C}\n\n| backlog | system | s | tasks/s | peak RSS MB | settled RSS MB | CPU µs/task | V8 helper threads µs/task | broker CPU µs/task |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n`,
);
for (const s of samples.filter((x) => x.metric === 'drain')) {
  const of = (metric: string) =>
    samples.find((x) => x.system === s.system && x.x === s.x && x.metric === metric)?.value;
  process.stdout.write(
    `| ${s.x} | ${s.system} | ${s.value.toFixed(2)} | ${Math.round(of('tasks/s') ?? NaN)} | ${of('peak RSS')} | ${of('settled RSS')} | ${Math.round(of('CPU per task') ?? NaN)} | ${of('V8 helper-thread CPU per task')?.toFixed(0) ?? '–'} | ${Math.round(of('broker CPU per task') ?? NaN)} |\n`,
  );
}
