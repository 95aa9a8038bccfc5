/**
 * A connection cut at the worst moment: the server ran the command that took messages, and the reply never
 * came back (what a Redis restart or a network cut does to a command in flight). Through a proxy that drops
 * replies and then cuts every connection, no message may be lost, nor left in `unacked` until the
 * visibility timeout: the restart defect of a pop whose reply is lost, made to happen on every run.
 */
import { randomUUID } from 'node:crypto';
import type { Delivery } from '../../lib/broker/broker.js';
import { RedisBroker } from '../../lib/broker/redis/redis-broker.js';
import { nullLogger } from '../../lib/logger.js';
import { encodeTaskMessage } from '../../lib/protocol/index.js';
import { type ReplyCutProxy, startReplyCutProxy } from '../support/reply-cut-proxy.js';
import { REDIS_URL, type RedisScope, redisScope } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

let s: RedisScope;
let proxy: ReplyCutProxy;
const brokers: RedisBroker[] = [];
const broker = async (url: string) => {
  const b = new RedisBroker({ url, logger: nullLogger(), keyPrefix: s.prefix, schedulerIntervalMs: 100 });
  brokers.push(b);
  await b.connect();
  return b;
};
const task = (id: string) => encodeTaskMessage({ id, task: 'tasks.add', args: [1], kwargs: {} });
const idOf = (d: Delivery) => String(d.raw.properties.correlationId);

beforeEach(async () => {
  s = redisScope();
  const u = new URL(REDIS_URL);
  proxy = await startReplyCutProxy({ host: u.hostname, port: Number(u.port || 6379) });
});
afterEach(async () => {
  for (const b of brokers.splice(0)) await b.close();
  await proxy.close();
  await s.close();
});
const viaProxy = () => {
  const u = new URL(REDIS_URL);
  u.host = `127.0.0.1:${proxy.port}`;
  return u.toString();
};

test('the reply of a pop is lost and the connection cut: every message is still delivered, none stays unacked', async () => {
  const N = 5000;
  const pub = await broker(REDIS_URL);
  await pub.declareQueue({ name: 'q' });
  const ids = Array.from({ length: N }, () => randomUUID());
  const pipe = s.redis.pipeline();
  for (const id of ids) {
    pipe.lpush(
      s.keys.queue('q', 0),
      JSON.stringify({
        body: task(id).body.toString('base64'),
        'content-encoding': 'utf-8',
        'content-type': 'application/json',
        headers: { id, task: 'tasks.add' },
        properties: {
          correlation_id: id,
          body_encoding: 'base64',
          delivery_tag: randomUUID(),
          delivery_info: { exchange: '', routing_key: 'q' },
          priority: 0,
          delivery_mode: 2,
        },
      }),
    );
  }
  await pipe.exec();

  const seen = new Set<string>();
  const b = await broker(viaProxy());
  let cut = false;
  let atCut = 0;
  await b.consume('q', (d) => {
    seen.add(idOf(d));
    d.ack();
    if (!cut && seen.size >= 500) {
      cut = true;
      atCut = seen.size;
      void proxy.swallow(300);
    }
  });
  await waitFor(async () => seen.size === N && (await s.redis.hlen(s.keys.unacked)) === 0, 20_000, {
    what: () => `all ${N} delivered and acked (delivered: ${seen.size})`,
  });
  expect(atCut).toBeLessThan(N);
  expect({
    delivered: seen.size,
    unacked: await s.redis.hlen(s.keys.unacked),
    left: await s.redis.llen(s.keys.queue('q', 0)),
  }).toEqual({ delivered: N, unacked: 0, left: 0 });
}, 40_000);

test('a message handed to a blocked wait whose reply is lost is still delivered after the reconnect', async () => {
  const pub = await broker(REDIS_URL);
  await pub.declareQueue({ name: 'q' });
  const seen: string[] = [];
  const b = await broker(viaProxy());
  await b.consume('q', (d) => {
    seen.push(idOf(d));
    d.ack();
  });
  // Let the consume loop find the queue empty and block on it.
  await new Promise((r) => setTimeout(r, 300));
  const swallowed = proxy.swallow(600);
  await new Promise((r) => setTimeout(r, 150));
  const id = randomUUID();
  await pub.send('q', task(id));
  await swallowed;
  await waitFor(() => seen.length > 0, 10_000, { what: 'the delivery after the reconnect' });
  expect(seen).toEqual([id]);
  await waitFor(async () => (await s.redis.hlen(s.keys.unacked)) === 0, 5_000, { what: 'no message left unacked' });
  expect(await s.redis.hlen(s.keys.unacked)).toBe(0);
}, 30_000);
