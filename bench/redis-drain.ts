/**
 * The Redis drain benchmark: drain N celery.accumulate messages published by Python Celery into Redis (kombu's
 * layout), late ack, results ignored; our worker, Python Celery's prefork worker (same concurrency and
 * prefetch) and celery-node's worker, one after another on the same Redis, in one run. A drain ends when the
 * queue list is empty and nothing is left in `unacked` (for the late-acking workers).
 *
 *   npm run build && node dist/bench/redis-drain.js [count=20000] [concurrency=4]
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import {
  PYTHON,
  type Row,
  observed as observedRow,
  ourDrainWorker,
  pythonDrainWorker,
  selfTimed as selfTimedRow,
  table,
  timeDrainOf,
} from './support.js';

const exec = promisify(execFile);
const count = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 4);
const prefetch = concurrency * 4;
/** A database of its own, so `unacked` holds only this benchmark's messages. */
const URL_ = process.env.BENCH_REDIS_BROKER_URL ?? 'redis://127.0.0.1:6379/9';
const redis = new Redis(URL_);
const env = { ...process.env, CELERY_BROKER_URL: URL_, BENCH_AMQP_URL: URL_ };

async function publish(queue: string): Promise<void> {
  await redis.del(queue, 'unacked', 'unacked_index');
  const t = performance.now();
  await exec(PYTHON, ['bench/python/benchapp.py', queue, String(count)], { env, maxBuffer: 1 << 24 });
  process.stderr.write(
    `  published ${count} with Python Celery into Redis in ${((performance.now() - t) / 1000).toFixed(1)} s\n`,
  );
}

/** Drained: the queue list is empty and, for a late-acking worker, nothing is left in `unacked`. */
const drained = (queue: string, ackLate: boolean) =>
  timeDrainOf(`queue ${queue}`, count, async () => {
    const [ready, unacked] = await Promise.all([
      redis.llen(queue),
      ackLate ? redis.hlen('unacked') : Promise.resolve(0),
    ]);
    return { ready, unacked };
  });
const observed = (name: string, queue: string, start: () => ChildProcess, note: string, ackLate = true) =>
  observedRow(name, count, start, () => drained(queue, ackLate), note);
const selfTimed = (name: string, start: () => ChildProcess, note: string) => selfTimedRow(name, count, start, note);

const rows: Row[] = [];
const run = async (name: string, fn: (queue: string) => Promise<Row>) => {
  const queue = `bench_redis_${name.replace(/\W+/g, '_')}`;
  process.stderr.write(`${name}\n`);
  await publish(queue);
  rows.push(await fn(queue));
  await redis.del(queue, `_kombu.binding.${queue}`, 'unacked', 'unacked_index');
};

await run('smarter-worker', (q) =>
  observed(
    'smarter-worker',
    q,
    () => ourDrainWorker(q, ['-c', String(concurrency), '--prefetch-multiplier', '4'], env),
    `late ack, -c ${concurrency}, prefetch ${prefetch}`,
  ),
);
await run('python-celery', (q) =>
  observed(
    'python-celery',
    q,
    () => pythonDrainWorker(q, concurrency, env),
    `Celery 5.2.6 prefork, late ack, -c ${concurrency}, prefetch ${prefetch}`,
  ),
);
await run('celery-node', (q) =>
  selfTimed(
    'celery-node',
    () =>
      spawn(process.execPath, ['dist/bench/celery-node-worker.js', q, String(count)], {
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    'acks on receipt, no prefetch limit, stores every result in Redis',
  ),
);

process.stdout.write(
  `\n${count} × celery.accumulate from Python into Redis, ${concurrency} concurrency, on ${process.platform} ${process.arch}\n\n`,
);
process.stdout.write(`${table(rows, 'python-celery')}\n`);
await redis.quit();
