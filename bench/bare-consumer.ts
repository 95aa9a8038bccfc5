/** The machine's limit: an amqplib consumer that only parses each body and acks it. Prints its timing. */
import amqp from 'amqplib';

const [queue = 'bench', countText = '0', prefetchText = '16'] = process.argv.slice(2);
const total = Number(countText);
const conn = await amqp.connect(process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672//');
const ch = await conn.createChannel();
await ch.prefetch(Number(prefetchText));
let n = 0;
let t0 = 0;
await ch.consume(queue, (msg) => {
  if (!msg) return;
  if (n === 0) t0 = performance.now();
  JSON.parse(msg.content.toString('utf8'));
  ch.ack(msg);
  if (++n === total) {
    process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - t0) / 1000 })}\n`);
  }
});
process.on('SIGTERM', () => void conn.close().finally(() => process.exit(0)));
