/**
 * Issue 15's memory benchmark: RSS of the infrastructure worker (bench/iso-worker.ts on its own queue) idle,
 * with N and M checks waiting (bench.check with a 10-minute countdown: they wait in the broker's delay levels,
 * not in the worker), then after a churn of C tasks run through it. The number to watch is growth between
 * the last two.
 *
 *   npm run build && node dist/bench/memory.js [waiting=10000,100000] [churn=100000]
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { record, type Sample } from './record.js';
import { AMQP_URL, PYTHON, REDIS_URL, consumersUp, deleteQueue, pythonPublish, readyCount, rssMb, sleep, stop } from './support.js';

const exec = promisify(execFile);
const waiting = (process.argv[2] ?? '10000,100000').split(',').map(Number);
const churn = Number(process.argv[3] ?? 100_000);
const queue = `bench_memory_${process.pid}`;
const env = { ...process.env, CELERY_BROKER_URL: AMQP_URL, CELERY_RESULT_BACKEND: REDIS_URL, BENCH_INFRA_QUEUE: queue, CELERY_TASK_IGNORE_RESULT: 'true' };
const system = 'smarter-worker';

async function settled(): Promise<number> {
  while ((await readyCount(queue)) > 0) await sleep(500);
  await sleep(3000);
  return rssMb(worker.pid);
}

await deleteQueue(queue);
const worker = spawn(process.execPath, ['dist/bench/iso-worker.js', '-Q', queue, '-c', '4', '-l', 'warning'], { env, stdio: 'ignore' });
await consumersUp(queue);
const samples: Sample[] = [{ bench: 'memory', system, metric: 'RSS, checks waiting', unit: 'MB', value: await settled(), x: 0 }];
let sent = 0;
for (const total of waiting) {
  process.stderr.write(`memory: ${total} checks waiting\n`);
  await exec(PYTHON, ['bench/python/benchiso.py', 'storm', queue, String(total - sent), '600'], { env, maxBuffer: 1 << 24, timeout: 900_000 });
  sent = total;
  samples.push({ bench: 'memory', system, metric: 'RSS, checks waiting', unit: 'MB', value: await settled(), x: total });
}
process.stderr.write(`memory: churn of ${churn} tasks\n`);
await pythonPublish(queue, churn);
samples.push({ bench: 'memory', system, metric: 'RSS after churn', unit: 'MB', value: await settled(), x: churn });
await stop(worker, 'SIGQUIT');
await deleteQueue(queue);
record(samples);

process.stdout.write(`\n${system} (infrastructure worker) RSS\n\n| state | MB |\n|---|---:|\n`);
for (const s of samples) process.stdout.write(`| ${s.metric} @ ${s.x} | ${s.value} |\n`);
