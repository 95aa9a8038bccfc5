/**
 * RedisBroker on the real Redis under its own key prefix: consume with kombu's QoS counting, ack and
 * requeue by tag, restore of unsettled messages at close, the pidbox fanout, reply queues through the
 * direct reply exchange, and messages published for later staying out of `unacked` until due.
 */
import { randomUUID } from 'node:crypto';
import type { Delivery } from '../../lib/broker/broker.js';
import { RedisBroker } from '../../lib/broker/redis/redis-broker.js';
import { nullLogger } from '../../lib/logger.js';
import { encodeTaskMessage } from '../../lib/protocol/index.js';
import { REDIS_URL, type RedisScope, redisBrokersPerTest } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

let s: RedisScope;
const brokers = redisBrokersPerTest((scope) => (s = scope));
const broker = (extra: Partial<ConstructorParameters<typeof RedisBroker>[0]> = {}) =>
  brokers.opened(
    new RedisBroker({
      url: REDIS_URL,
      logger: nullLogger(),
      keyPrefix: s.prefix,
      schedulerIntervalMs: 100,
      ...extra,
    }),
  );
/** A broker consuming queue `q`, what it delivers collected in `got`. */
const consumingQ = async () => {
  const b = await broker();
  const got: Delivery[] = [];
  await b.consume('q', (d) => got.push(d));
  return { b, got };
};
const task = (id: string) => encodeTaskMessage({ id, task: 'tasks.add', args: [1], kwargs: {} });

test('prefetch 2: two messages held unsettled at a time, the next one comes after an ack', async () => {
  const b = await broker();
  await b.declareQueue({ name: 'q' });
  for (const id of ['a', 'b', 'c']) await b.send('q', task(id));
  const got: Delivery[] = [];
  await b.consume('q', (d) => got.push(d), { prefetch: 2 });
  await waitFor(() => got.length === 2, 10_000);
  await new Promise((r) => setTimeout(r, 300));
  expect(got).toHaveLength(2);
  expect(await s.redis.hlen(s.keys.unacked)).toBe(2);
  got[0]?.ack();
  await waitFor(() => got.length === 3, 10_000);
  got[1]?.ack();
  got[2]?.ack();
  await waitFor(async () => (await s.redis.hlen(s.keys.unacked)) === 0, 10_000);
  expect(got.map((d) => d.raw.properties.correlationId)).toEqual(['a', 'b', 'c']);
});

test('a message published while the consumer waits on BRPOP arrives; reject with requeue brings it back redelivered', async () => {
  const { b, got } = await consumingQ();
  await new Promise((r) => setTimeout(r, 100));
  await b.send('q', task('w'));
  await waitFor(() => got.length === 1, 10_000);
  got[0]?.reject(true);
  await waitFor(() => got.length === 2, 10_000);
  expect(got[1]?.redelivered).toBe(true);
  got[1]?.ack();
});

test('close restores what was taken and not settled, to the front of its queue', async () => {
  const b = await broker();
  for (const id of ['x', 'y']) await b.send('q', task(id));
  const got: Delivery[] = [];
  await b.consume('q', (d) => got.push(d));
  await waitFor(() => got.length === 2, 10_000);
  got[1]?.ack();
  await brokers.close(b);
  expect(await s.redis.hlen(s.keys.unacked)).toBe(0);
  expect(await s.redis.llen(s.keys.queue('q'))).toBe(1);
});

test("the pidbox: a broadcast on celery.pidbox reaches the node queue; the reply goes to the client's reply queue", async () => {
  const b = await broker();
  const node = `n${randomUUID().slice(0, 6)}@host`;
  await b.declareExchange({ name: 'celery.pidbox', kind: 'fanout', durable: false });
  await b.declareExchange({ name: 'reply.celery.pidbox', kind: 'direct', durable: false });
  const got: Delivery[] = [];
  await b.subscribe('celery.pidbox', { queue: `${node}.celery.pidbox` }, (d) => got.push(d));
  const ticket = randomUUID();
  await s.redis.sadd(s.keys.binding('reply.celery.pidbox'), `${ticket}\x06\x16\x06\x16${ticket}.reply.celery.pidbox`);
  const body = Buffer.from(
    JSON.stringify({ method: 'ping', reply_to: { exchange: 'reply.celery.pidbox', routing_key: ticket } }),
  );
  const props = {
    contentType: 'application/json',
    contentEncoding: 'utf-8',
    headers: {},
    deliveryMode: 2 as const,
    priority: 0,
  };
  await b.route('celery.pidbox', '', { body, properties: props });
  await waitFor(() => got.length === 1, 10_000);
  expect(got[0]?.exchange).toBe('celery.pidbox');
  await b.route('reply.celery.pidbox', ticket, { body: Buffer.from('{"pong": 1}'), properties: props });
  expect(await s.redis.llen(s.keys.queue(`${ticket}.reply.celery.pidbox`))).toBe(1);
});

test('a message published for later waits in the delayed set, not in unacked, and arrives once due', async () => {
  const { b, got } = await consumingQ();
  await b.sendLater('q', task('later'), 800);
  await new Promise((r) => setTimeout(r, 300));
  expect(got).toHaveLength(0);
  expect(await s.redis.hlen(s.keys.unacked)).toBe(0);
  expect(await s.redis.zcard(s.keys.delayed)).toBe(1);
  await waitFor(() => got.length === 1, 10_000);
  got[0]?.ack();
});

test('a deferred delivery leaves unacked and enters the delayed set in one step, then arrives once due, not marked redelivered', async () => {
  const { b, got } = await consumingQ();
  await b.send('q', task('far'));
  await waitFor(() => got.length === 1, 10_000);
  expect(await s.redis.hlen(s.keys.unacked)).toBe(1);
  await b.defer(got[0]!, 800);
  expect(got[0]?.settled).toBe(true);
  expect({
    unacked: await s.redis.hlen(s.keys.unacked),
    index: await s.redis.zcard(s.keys.unackedIndex),
    delayed: await s.redis.zcard(s.keys.delayed),
  }).toEqual({ unacked: 0, index: 0, delayed: 1 });
  await waitFor(() => got.length === 2, 10_000);
  expect(got[1]?.redelivered).toBe(false);
  expect(await s.redis.zcard(s.keys.delayed)).toBe(0);
  got[1]?.ack();
});

test('defer refuses a delivery that is already settled (it is not ours to move any more)', async () => {
  const { b, got } = await consumingQ();
  await b.send('q', task('acked'));
  await waitFor(() => got.length === 1, 10_000);
  got[0]?.ack();
  await expect(b.defer(got[0]!, 800)).rejects.toThrow(/unsettled delivery/);
  expect(await s.redis.zcard(s.keys.delayed)).toBe(0);
});

test('a message held past the visibility timeout is restored and delivered again', async () => {
  const b = await broker({ visibilityTimeoutSeconds: 1, restoreIntervalMs: 200 });
  await b.send('q', task('slow'));
  const got: Delivery[] = [];
  await b.consume('q', (d) => got.push(d));
  await waitFor(() => got.length === 2, 15_000);
  expect(got[1]?.redelivered).toBe(true);
  got[1]?.ack();
  got[0]?.ack();
});

/** The EVALSHA calls on this test's unacked hash, as Redis received them (MONITOR), each as its arguments. */
async function scriptCalls(): Promise<{ calls: string[][]; stop: () => void }> {
  const monitor = await s.redis.monitor();
  const calls: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args[0]?.toLowerCase() === 'evalsha' && args[3] === s.keys.unacked) calls.push(args);
  });
  return { calls, stop: () => monitor.disconnect() };
}

test('the acks of one turn of the event loop reach Redis in one call; a pop takes at most half the window', async () => {
  const b = await broker();
  await b.declareQueue({ name: 'q' });
  for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) await b.send('q', task(id));
  const redis = await scriptCalls();
  const got: Delivery[] = [];
  await b.consume('q', (d) => got.push(d), { prefetch: 4 });
  await waitFor(() => got.length === 4, 10_000);
  const tags = got.map((d) => (d as Delivery & { deliveryTag: string }).deliveryTag);
  for (const d of got) d.ack();
  await waitFor(() => got.length === 6, 10_000);
  await waitFor(async () => (await s.redis.hlen(s.keys.unacked)) === 2, 10_000);
  redis.stop();
  const acks = redis.calls.filter((c) => tags.some((t) => c.includes(t)) && Number(c[2]) === 2);
  expect(acks).toHaveLength(1);
  expect(acks[0]?.slice(5)).toEqual(tags);
  // POP's ARGV[4] is how many it may take: 2 of a window of 4.
  const pops = redis.calls.filter((c) => Number(c[2]) > 4);
  expect(pops.length).toBeGreaterThanOrEqual(3);
  for (const p of pops) expect(Number(p[3 + Number(p[2]) + 3])).toBeLessThanOrEqual(2);
});

test('acks asked for just before close reach Redis: close restores none of those messages', async () => {
  const { b, got } = await consumingQ();
  for (const id of ['a', 'b', 'c']) await b.send('q', task(id));
  await waitFor(() => got.length === 3, 10_000);
  for (const d of got) d.ack();
  await b.close();
  expect(await s.redis.hlen(s.keys.unacked)).toBe(0);
  expect(await s.redis.llen(s.keys.queue('q', 0))).toBe(0);
});
