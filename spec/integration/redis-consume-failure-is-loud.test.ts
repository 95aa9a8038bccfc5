/**
 * A Redis consume that fails is seen: a pop over a queue key of the wrong type moves nothing (no message of
 * the other queues waits in `unacked`), is logged at error once per cause, and the queues read as not
 * consumed (so /readyz answers 503) until the key is fixed. Losing the broker and getting it back are logged
 * with how long it was away.
 */
import { randomUUID } from 'node:crypto';
import { RedisBroker } from '../../lib/broker/redis/redis-broker.js';
import { encodeTaskMessage } from '../../lib/protocol/index.js';
import { type LogLine, recordingLogger } from '../support/logs.js';
import { REDIS_URL, type RedisScope, redisBrokersPerTest } from '../support/redis.js';
import { startRedisNode } from '../support/redis-node.js';
import { waitFor } from '../support/wait.js';

let s: RedisScope;
const brokers = redisBrokersPerTest((scope) => (s = scope));

test('a queue key of the wrong type: the pop moves nothing, one error line, not consuming until it is fixed', async () => {
  const lines: LogLine[] = [];
  const b = await brokers.opened(
    new RedisBroker({ url: REDIS_URL, logger: recordingLogger(lines), keyPrefix: s.prefix }),
  );
  for (let i = 0; i < 50; i++) {
    const m = encodeTaskMessage({ id: randomUUID(), task: 'tasks.add', args: [i], kwargs: {} });
    await b.send('good', { body: m.body, properties: m.properties });
  }
  // Whichever of the two queues a pop reads first, `good`'s messages stay in their list.
  await s.redis.set(s.keys.queue('pq', 0), 'x');
  let got = 0;
  await b.declareQueue({ name: 'good' });
  await b.declareQueue({ name: 'pq' });
  await b.consume('pq', (d) => d.ack());
  await b.consume('good', (d) => {
    got++;
    d.ack();
  });
  await waitFor(() => lines.filter((l) => l.level === 'error').length > 0, 10_000);
  await new Promise((r) => setTimeout(r, 2000));
  expect(await s.redis.hlen(s.keys.unacked)).toBe(0);
  expect(got).toBe(0);
  expect(await s.redis.llen(s.keys.queue('good', 0))).toBe(50);
  const errors = lines.filter((l) => l.level === 'error');
  expect(errors).toHaveLength(1);
  expect(errors[0]?.message).toMatch(/consum.*pq.*not a list/i);
  expect([b.isConsuming('good'), b.isConsuming('pq')]).toEqual([false, false]);

  await s.redis.del(s.keys.queue('pq', 0));
  await waitFor(() => got === 50 && b.isConsuming('good') && b.isConsuming('pq'), 10_000);
  expect(lines.some((l) => l.level === 'info' && /consuming again/.test(l.message))).toBe(true);
}, 30_000);

test('Redis stopped for 3 s: the loss is logged at warn, the reconnect at info with how long the broker was away', async () => {
  const server = await startRedisNode();
  try {
    const lines: LogLine[] = [];
    const b = await brokers.opened(new RedisBroker({ url: server.url, logger: recordingLogger(lines) }));
    await b.declareQueue({ name: 'q' });
    await b.consume('q', (d) => d.ack());
    await server.stop();
    try {
      await waitFor(() => lines.some((l) => l.level === 'warn' && /broker connection lost/.test(l.message)), 10_000);
      await new Promise((r) => setTimeout(r, 3000));
    } finally {
      // Back up whatever happened: the broker's close waits for its blocked wait, which needs the server.
      await server.start();
    }
    await waitFor(() => lines.some((l) => l.level === 'info' && /restored after/.test(l.message)), 20_000);
    const back = lines.find((l) => /restored after/.test(l.message));
    const awayMs = Number(back?.meta.away_ms);
    expect(awayMs).toBeGreaterThanOrEqual(3000);
    expect(awayMs).toBeLessThan(20_000);
    expect(back?.message).toMatch(/restored after \d+\.\d s away/);
    expect(lines.filter((l) => /broker connection lost/.test(l.message))).toHaveLength(1);
  } finally {
    await brokers.closeAll();
    await server.remove();
  }
}, 60_000);

test('an early ack is in Redis once acked() resolves: the message is gone from unacked before the task may start', async () => {
  const b = await brokers.opened(new RedisBroker({ url: REDIS_URL, logger: recordingLogger([]), keyPrefix: s.prefix }));
  await b.declareQueue({ name: 'early' });
  for (let i = 0; i < 20; i++) {
    const m = encodeTaskMessage({ id: randomUUID(), task: 'tasks.add', args: [i], kwargs: {} });
    await b.send('early', { body: m.body, properties: m.properties });
  }
  const inRedisAtStart: number[] = [];
  let n = 0;
  await b.consume('early', (d) => {
    d.ack();
    void (async () => {
      await d.acked?.();
      inRedisAtStart.push(await s.redis.hexists(s.keys.unacked, (d as { deliveryTag?: string }).deliveryTag ?? ''));
      n++;
    })();
  });
  await waitFor(() => n === 20, 10_000);
  expect(inRedisAtStart).toEqual(Array.from({ length: 20 }, () => 0));
});
