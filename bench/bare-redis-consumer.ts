/**
 * The machine's limit on Redis, beside bare-consumer.ts on RabbitMQ: kombu's late-ack layout at its least. A
 * Lua script pops up to `prefetch` messages and holds each in `unacked` and `unacked_index` (what a late-acking
 * consumer writes), then each body is parsed and acked (HDEL and ZREM, pipelined). Prints its timing.
 *
 *   node dist/bench/bare-redis-consumer.js <queue> <count> [prefetch=16]   (BENCH_REDIS_URL names the server)
 */
import { Redis } from 'ioredis';

const [queue = 'bench', countText = '0', prefetchText = '16'] = process.argv.slice(2);
const total = Number(countText);
const redis = new Redis(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0');
const POP = `
local out = {}
for i = 1, tonumber(ARGV[1]) do
  local m = redis.call('RPOP', KEYS[1])
  if not m then break end
  local tag = ARGV[2] .. i
  redis.call('HSET', KEYS[2], tag, '[' .. m .. ', "", "' .. KEYS[1] .. '"]')
  redis.call('ZADD', KEYS[3], ARGV[3], tag)
  out[#out + 1] = m
  out[#out + 1] = tag
end
return out`;
let n = 0;
let t0 = 0;
let round = 0;
process.on('SIGTERM', () => void redis.quit().finally(() => process.exit(0)));
while (n < total) {
  const got = (await redis.eval(
    POP,
    3,
    queue,
    'unacked',
    'unacked_index',
    prefetchText,
    `bare-${process.pid}-${round++}-`,
    Date.now() / 1000,
  )) as string[];
  if (got.length === 0) {
    await new Promise((r) => setTimeout(r, 5));
    continue;
  }
  if (t0 === 0) t0 = performance.now();
  const acks = redis.pipeline();
  for (let i = 0; i + 1 < got.length; i += 2) {
    const env = JSON.parse(got[i] ?? '{}') as { body: string };
    JSON.parse(Buffer.from(env.body, 'base64').toString('utf8'));
    acks.hdel('unacked', got[i + 1] ?? '').zrem('unacked_index', got[i + 1] ?? '');
    n++;
  }
  // One connection: the next pop runs after these acks, so nothing more is held than one window.
  void acks.exec();
}
process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - t0) / 1000 })}\n`);
await new Promise(() => undefined);
