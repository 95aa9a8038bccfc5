/** celery-node's worker running celery.accumulate; it acks on receipt and sets no prefetch. Prints its timing. */
import celery from 'celery-node';

const [queue = 'bench', countText = '0'] = process.argv.slice(2);
const total = Number(countText);
const url = process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672//';
const worker = celery.createWorker(url, process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0', queue);
let n = 0;
let t0 = 0;
worker.register('celery.accumulate', (...args: unknown[]) => {
  if (n === 0) t0 = performance.now();
  if (++n === total) process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - t0) / 1000 })}\n`);
  return args;
});
void worker.start();
process.on('SIGTERM', () => process.exit(0));
