/**
 * Smarter's create_charge, end to end (publish → row committed in MariaDB), by our worker
 * and by Python Celery running the same task on the same table, one after the other in one run.
 *   1. throughput: N charges published by Python Celery (protocol 1, as Smarter sends), then drained; the clock
 *      runs from the first row to the N-th committed row; every row is accounted for (count and exact sum);
 *   2. latency at a fixed rate: charges published at R/s for S seconds; p50/p99 of created_at − publish time.
 *
 *   npm run build && node dist/bench/charges.js [count=10000] [rate=200] [seconds=15]
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { Dec } from '../tasks/db/decimal.js';
import { record } from './record.js';
import { AMQP_URL, PYTHON, deleteQueue, freshQueue, peakRssMb, pythonWorkerArgs, stop, waitHeld } from './support.js';

const exec = promisify(execFile);
const count = Number(process.argv[2] ?? 10_000);
const rate = Number(process.argv[3] ?? 200);
const seconds = Number(process.argv[4] ?? 15);
const COST = '0.00123456';
const MYSQL = {
  host: process.env.SMARTER_MYSQL_HOST ?? '127.0.0.1',
  port: Number(process.env.SMARTER_MYSQL_PORT ?? 3306),
  user: process.env.SMARTER_MYSQL_USER ?? 'root',
  password: process.env.SMARTER_MYSQL_PASSWORD ?? '',
};
const database = `bench_charges_${process.pid}`;

const admin = await mysql.createConnection({ ...MYSQL, multipleStatements: true });
await admin.query(
  `DROP DATABASE IF EXISTS \`${database}\`; CREATE DATABASE \`${database}\`; USE \`${database}\`; ${readFileSync('tasks/db/schema.sql', 'utf8')}`,
);
const q = async (sql: string) => (await admin.query<mysql.RowDataPacket[]>(sql))[0];

const env = {
  ...process.env,
  CELERY_BROKER_URL: AMQP_URL,
  SMARTER_MYSQL_DATABASE: database,
  SMARTER_MYSQL_HOST: MYSQL.host,
  SMARTER_MYSQL_PORT: String(MYSQL.port),
  SMARTER_MYSQL_USER: MYSQL.user,
  SMARTER_MYSQL_PASSWORD: MYSQL.password,
};

interface Worker {
  name: string;
  note: string;
  start(queue: string): ChildProcess;
}
const workers: Worker[] = [
  ...[
    [4, 10],
    [64, 16],
  ].map(([c, pool]) => ({
    name: `smarter-worker -c ${c}`,
    note: `early ack as Smarter, pool of ${pool}${Number(c) > 4 ? ' (async I/O: a slot costs no process)' : ''}`,
    start: (queue: string) =>
      spawn(process.execPath, ['dist/tasks/main.js', '-Q', queue, '-c', String(c), '-l', 'warning'], {
        env: { ...env, SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE: queue, SMARTER_WORKER_DB_POOL_SIZE: String(pool) },
        stdio: ['ignore', 'ignore', 'inherit'],
      }),
  })),
  ...[4, 16].map((c) => ({
    name: `python-celery -c ${c}`,
    note: `Celery 5.2.6 prefork (${c} processes), pymysql, one connection per process`,
    start: (queue: string) =>
      spawn(PYTHON, pythonWorkerArgs('benchcharges', queue, c, ['--without-heartbeat']), {
        cwd: 'bench/python',
        env,
        stdio: ['ignore', 'ignore', 'ignore'],
      }),
  })),
];

const py = (...args: string[]) => exec(PYTHON, ['bench/python/benchcharges.py', ...args], { env, maxBuffer: 1 << 24 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rows(): Promise<{ n: number; sum: string }> {
  const [r] = await q('SELECT COUNT(*) n, COALESCE(SUM(total_cost), 0) s FROM account_charge');
  return { n: Number(r?.n), sum: String(r?.s) };
}

interface Result {
  name: string;
  seconds: number;
  rate: number;
  p50: number;
  p99: number;
  rssMb: number;
  accounted: string;
  note: string;
}
const results: Result[] = [];

for (const w of workers) {
  const queue = `bench_charges_${w.name.replace(/\W+/g, '_')}`;
  process.stderr.write(`${w.name}\n`);
  await q('DELETE FROM account_charge');
  await freshQueue(queue);
  await py('publish', queue, String(count));
  await waitHeld(queue, count);
  const child = w.start(queue);
  let first: number | undefined;
  let last = 0;
  const deadline = Date.now() + 600_000;
  for (;;) {
    const { n } = await rows();
    const now = performance.now();
    if (first === undefined && n > 0) first = now;
    if (n >= count) {
      last = now;
      break;
    }
    if (Date.now() > deadline) {
      // Stopped first: left running, it would consume the next run's queue of the same name.
      await stop(child);
      throw new Error(`${w.name}: only ${n} of ${count} rows`);
    }
    await sleep(20);
  }
  const { n, sum } = await rows();
  const expected = Dec.of(COST).mul(Dec.of(count)).quantize(8).toString();
  const accounted =
    n === count && Dec.of(sum).cmp(Dec.of(expected)) === 0
      ? `${n} rows, Σ ${sum} ✓`
      : `${n} rows, Σ ${sum} ≠ ${expected} ✗`;

  await q('DELETE FROM account_charge');
  await py('paced', queue, String(rate), String(seconds));
  const paced = Math.floor(rate * seconds);
  while ((await rows()).n < paced && Date.now() < deadline) await sleep(50);
  const lat = await q(
    'SELECT (UNIX_TIMESTAMP(created_at) * 1000000 - CAST(SUBSTRING(resource_locator, 5) AS UNSIGNED)) / 1000 ms FROM account_charge ORDER BY ms',
  );
  const pick = (p: number) => Number(lat[Math.min(lat.length - 1, Math.floor((lat.length * p) / 100))]?.ms ?? NaN);
  const rssMb = child.pid ? peakRssMb(child.pid) : 0;
  await stop(child);
  await deleteQueue(queue);
  const secs = (last - (first ?? last)) / 1000;
  results.push({
    name: w.name,
    seconds: secs,
    rate: count / secs,
    p50: pick(50),
    p99: pick(99),
    rssMb,
    accounted,
    note: w.note,
  });
}
await admin.query(`DROP DATABASE \`${database}\``);
await admin.end();

record(
  results.flatMap((r) => [
    { bench: 'charges', system: r.name, metric: 'drain', unit: 's', value: r.seconds },
    { bench: 'charges', system: r.name, metric: 'charges/s', unit: '1/s', value: r.rate },
    { bench: 'charges', system: r.name, metric: 'p50', unit: 'ms', value: r.p50, x: rate },
    { bench: 'charges', system: r.name, metric: 'p99', unit: 'ms', value: r.p99, x: rate },
  ]),
);
const base = results.find((r) => r.name === 'python-celery -c 4')?.rate ?? 1;
process.stdout.write(
  `\n${count} × create_charge (Python Celery producer, protocol 1) → MariaDB; latency at ${rate}/s for ${seconds} s\n\n`,
);
process.stdout.write(
  '| worker | drain s | charges/s | × python -c 4 | p50 ms @rate | p99 ms @rate | peak RSS MB | accounted | note |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n',
);
for (const r of results) {
  process.stdout.write(
    `| ${r.name} | ${r.seconds.toFixed(2)} | ${Math.round(r.rate)} | ${(r.rate / base).toFixed(2)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.rssMb} | ${r.accounted} | ${r.note} |\n`,
  );
}
