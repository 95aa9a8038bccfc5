/**
 * The throughput benchmark: drain N celery.accumulate messages published by Python Celery, late ack, results
 * ignored; our worker, Python Celery's prefork worker (same concurrency and prefetch), celery-node's worker
 * and a bare amqplib consumer that only parses and acks, one after another on the same machine, in one run.
 *
 *   npm run build && node dist/bench/accumulate.js [count=20000] [concurrency=4]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { DEFAULT_CONCURRENCY } from '../lib/app/worker-settings.js';
import { record } from './record.js';
import { rotated } from './stats.js';
import {
  AMQP_URL,
  ourDrainWorker,
  pythonDrainWorker,
  REPETITION,
  type Row,
  deleteQueue,
  freshQueue,
  observed as observedRow,
  pythonPublish,
  selfTimed as selfTimedRow,
  table,
  timeDrain,
} from './support.js';

const count = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 4);
const prefetch = concurrency * 4;

async function prepared(queue: string): Promise<void> {
  await freshQueue(queue);
  const t = performance.now();
  await pythonPublish(queue, count);
  process.stderr.write(`  published ${count} with Python Celery in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
}

/** A consumer whose drain we observe from the queue (it respects its prefetch window). */
const observed = (name: string, queue: string, start: () => ChildProcess, note: string) =>
  observedRow(name, count, start, () => timeDrain(queue, count), note);
/** A consumer that reports its own timing (it takes everything at once, so the queue says nothing). */
const selfTimed = (name: string, start: () => ChildProcess, note: string) => selfTimedRow(name, count, start, note);

const env = { ...process.env, CELERY_BROKER_URL: AMQP_URL };
const rows: Row[] = [];
const run = async (name: string, fn: (queue: string) => Promise<Row>) => {
  const queue = `bench_${name.replace(/\W+/g, '_')}_${process.pid}`;
  process.stderr.write(`${name}\n`);
  await prepared(queue);
  rows.push(await fn(queue));
  await deleteQueue(queue);
};

const systems: [string, (queue: string) => Promise<Row>][] = [
  // The target is met at default settings: nothing but -Q (and the log level, which changes nothing here).
  [
    'smarter-worker',
    (q) =>
      observed(
        'smarter-worker',
        q,
        () => ourDrainWorker(q, [], env),
        `late ack, default flags (-c ${DEFAULT_CONCURRENCY}, prefetch ${DEFAULT_CONCURRENCY * 4})`,
      ),
  ],
  [
    `smarter-worker -c ${concurrency}`,
    (q) =>
      observed(
        `smarter-worker -c ${concurrency}`,
        q,
        () => ourDrainWorker(q, ['-c', String(concurrency), '--prefetch-multiplier', '4'], env),
        `late ack, -c ${concurrency}, prefetch ${prefetch} (Python's concurrency)`,
      ),
  ],
  [
    'python-celery',
    (q) =>
      observed(
        'python-celery',
        q,
        () => pythonDrainWorker(q, concurrency, env),
        `Celery 5.2.6 prefork, late ack, -c ${concurrency}, prefetch ${prefetch}`,
      ),
  ],
  [
    'celery-node',
    (q) =>
      selfTimed(
        'celery-node',
        () =>
          spawn(process.execPath, ['dist/bench/celery-node-worker.js', q, String(count)], {
            env,
            stdio: ['ignore', 'pipe', 'inherit'],
          }),
        'acks on receipt, no prefetch limit, stores every result in Redis',
      ),
  ],
  [
    'bare amqplib',
    (q) =>
      observed(
        'bare amqplib',
        q,
        () =>
          spawn(process.execPath, ['dist/bench/bare-consumer.js', q, String(count), String(prefetch)], {
            env,
            stdio: ['ignore', 'ignore', 'inherit'],
          }),
        `parse + ack only, prefetch ${prefetch}`,
      ),
  ],
];
// Each repetition starts with another system, so none is always first (or always after the same one).
for (const [name, fn] of rotated(systems, REPETITION)) await run(name, fn);

record(
  rows.flatMap((r) => [
    { bench: 'accumulate', system: r.name, metric: 'seconds', unit: 's', value: r.seconds },
    { bench: 'accumulate', system: r.name, metric: 'tasks/s', unit: '1/s', value: r.rate },
    { bench: 'accumulate', system: r.name, metric: 'peak RSS', unit: 'MB', value: r.rssMb },
  ]),
);
const ours = rows.find((r) => r.name === 'smarter-worker')?.rate ?? 0;
const bare = rows.find((r) => r.name === 'bare amqplib')?.rate ?? 1;
process.stdout.write(
  `\n${count} × celery.accumulate, ${concurrency} concurrency, on ${process.platform} ${process.arch}\n\n`,
);
process.stdout.write(
  `${table(rows, 'python-celery')}\n\nsmarter-worker / bare amqplib = ${(ours / bare).toFixed(2)}\n`,
);
