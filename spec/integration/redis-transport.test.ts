/**
 * kombu's Redis layout on the real Redis, each test under its own key prefix: priority order, the
 * unacked hash and index, ack/reject/restore, restore after the visibility timeout under kombu's mutex, the
 * delayed set, and the same layout read and written by kombu itself (Debian's kombu 5.2.4).
 */
import { decodeEnvelope } from '../../lib/broker/redis/envelope.js';
import { KombuKeys } from '../../lib/broker/redis/keys.js';
import { KombuRedis } from '../../lib/broker/redis/transport.js';
import { decodeTaskMessage, encodeTaskMessage } from '../../lib/protocol/index.js';
import { REDIS_URL, type RedisScope, redisScope } from '../support/redis.js';
import { pythonJson } from '../support/python-script.js';

const kombu = (prefix: string, ...args: string[]): Promise<unknown> =>
  pythonJson('spec/interop/python/kombu_redis.py', [REDIS_URL, prefix, ...args], { timeoutMs: 60_000 });
const task = (id: string, priority = 0) =>
  encodeTaskMessage({ id, task: 'tasks.add', args: [1, 2], kwargs: {}, priority });
/** Publishes a task message of each id to queue q, in order. */
async function publishTasks(ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    const m = task(id);
    await t.publish('', 'q', m.body, m.properties);
  }
}
const idOf = (text: string) => decodeTaskMessage(decodeEnvelope(text).raw, { accept: ['json'] }).id;

let s: RedisScope;
let t: KombuRedis;
beforeEach(() => {
  s = redisScope();
  t = new KombuRedis(s.redis, s.keys);
});
afterEach(async () => s.close());

test("messages are served in kombu's order: priority 0 before 3, 6, 9, oldest first within one", async () => {
  for (const [id, p] of [
    ['a9', 9],
    ['b0', 0],
    ['c5', 5],
    ['d0', 0],
    ['e7', 7],
  ] as const) {
    const m = task(id, p);
    await t.publish('', 'q', m.body, m.properties);
  }
  const order: string[] = [];
  for (let p = await t.pop(['q']); p; p = await t.pop(['q'])) order.push(idOf(p.text));
  expect(order).toEqual(['b0', 'd0', 'c5', 'e7', 'a9']);
});

test('a popped message sits in unacked (tag → [message, exchange, routing key]) and unacked_index until acked', async () => {
  const m = task('u1');
  await t.publish('', 'q', m.body, m.properties);
  const before = Date.now() / 1000;
  const p = await t.pop(['q']);
  expect(p?.queue).toBe('q');
  const tag = p?.deliveryTag ?? '';
  const entry = JSON.parse((await s.redis.hget(s.keys.unacked, tag)) ?? 'null') as [unknown, string, string];
  expect(entry[1]).toBe('');
  expect(entry[2]).toBe('q');
  expect(JSON.stringify(entry[0])).toBe(JSON.stringify(JSON.parse(p?.text ?? '')));
  expect(Number(await s.redis.zscore(s.keys.unackedIndex, tag))).toBeGreaterThanOrEqual(before - 1);
  expect(await t.ack(tag)).toBe(true);
  expect(await s.redis.hlen(s.keys.unacked)).toBe(0);
  expect(await s.redis.zcard(s.keys.unackedIndex)).toBe(0);
});

test('unacked_index is kept a skiplist from the first pop on (a listpack costs Redis a score parse per member at each ZADD and ZREM), holding only the tags', async () => {
  await publishTasks(['k1', 'k2']);
  const first = await t.pop(['q']);
  expect(await s.redis.object('ENCODING', s.keys.unackedIndex)).toBe('skiplist');
  const second = await t.pop(['q']);
  expect((await s.redis.zrange(s.keys.unackedIndex, 0, -1)).sort()).toEqual(
    [first?.deliveryTag, second?.deliveryTag].sort(),
  );
  expect(await t.ack(first?.deliveryTag ?? '')).toBe(true);
  // Stays one while it holds a tag, as Redis keeps a sorted set's encoding as it shrinks.
  expect(await s.redis.object('ENCODING', s.keys.unackedIndex)).toBe('skiplist');
});

test("the unacked entry keeps the envelope's own tag, exchange and routing key, whatever the envelope's layout", async () => {
  const props = (tag: string) =>
    `{"delivery_info": {"exchange": "ex-${tag}", "routing_key": "rk-${tag}"}, "priority": 0, "body_encoding": "base64", "delivery_tag": "${tag}"}`;
  const fake = '{"delivery_info": {"exchange": "wrong", "routing_key": "wrong"}, "delivery_tag": "wrong"}';
  const envelopes: [string, string][] = [
    // kombu's layout: the properties last, read alone.
    ['kombu', `{"body": "e30=", "headers": {"lang": "py"}, "properties": ${props('kombu')}}`],
    ['compact', JSON.stringify({ body: 'e30=', properties: JSON.parse(props('compact')) as unknown })],
    ['trailing blanks', `{"body": "e30=", "properties": ${props('trailing blanks')}}\n  `],
    // A "properties" nested deeper, after the real one or before it: never taken for the envelope's.
    ['nested after', `{"properties": ${props('nested after')}, "headers": {"x": {"properties": ${fake}}}}`],
    ['nested before', `{"headers": {"properties": ${fake}}, "properties": ${props('nested before')}}`],
    // A key that ends in "properties" behind an escaped quote: not the properties member.
    ['escaped key', `{"properties": ${props('escaped key')}, "a\\"properties": ${fake}}`],
  ];
  for (const [, text] of envelopes) await s.redis.lpush(s.keys.queue('q'), text);
  const popped = await t.popMany(['q'], 10);
  expect(popped.map((p) => p.deliveryTag)).toEqual(envelopes.map(([tag]) => tag));
  for (const p of popped) {
    const entry = JSON.parse((await s.redis.hget(s.keys.unacked, p.deliveryTag)) ?? 'null') as [
      unknown,
      string,
      string,
    ];
    expect(entry.slice(1)).toEqual([`ex-${p.deliveryTag}`, `rk-${p.deliveryTag}`]);
  }
});

test('noAck pops record nothing', async () => {
  const m = task('n1');
  await t.publish('', 'q', m.body, m.properties);
  expect(await t.pop(['q'], true)).not.toBeNull();
  expect(await t.unackedCount()).toBe(0);
});

test('the wait returns once a message arrives and takes nothing; the pop after it records it unacked', async () => {
  const blocking = s.connect();
  const waiting = t.waitReady(blocking, ['q'], 5);
  const m = task('w1');
  setTimeout(() => void t.publish('', 'q', m.body, m.properties), 200);
  await waiting;
  expect(await t.size('q')).toBe(1);
  const [p] = await t.popMany(['q'], 10);
  expect(idOf(p?.text ?? '')).toBe('w1');
  expect(await s.redis.hexists(s.keys.unacked, p?.deliveryTag ?? '')).toBe(1);
});

test('a pop sent again under the same request gets the same messages and takes no more; the next pop forgets it', async () => {
  await publishTasks(['p1', 'p2', 'p3']);
  const first = await t.popMany(['q'], 2, false, { id: 'req-1' });
  const again = await t.popMany(['q'], 2, false, { id: 'req-1' });
  expect(again.map((p) => p.deliveryTag)).toEqual(first.map((p) => p.deliveryTag));
  expect(first.map((p) => idOf(p.text))).toEqual(['p1', 'p2']);
  expect(await t.size('q')).toBe(1);
  const next = await t.popMany(['q'], 2, false, { id: 'req-2', forget: 'req-1' });
  expect(next.map((p) => idOf(p.text))).toEqual(['p3']);
  expect(await s.redis.exists(s.keys.popRequest('req-1'))).toBe(0);
  expect(await s.redis.hlen(s.keys.unacked)).toBe(3);
});

test('a pop sent again after one of its messages was restored returns only those still unacked, each whole', async () => {
  await publishTasks(['s1', 's2', 's3']);
  const first = await t.popMany(['q'], 3, false, { id: 'req-r' });
  expect(first.map((p) => idOf(p.text))).toEqual(['s1', 's2', 's3']);
  // Restored meanwhile (the visibility timeout, or a close): back in the queue, so not sent again.
  await t.restore(first[1]?.deliveryTag ?? '');
  const again = await t.popMany(['q'], 3, false, { id: 'req-r' });
  expect(again.map((p) => p.text)).toEqual([first[0]?.text, first[2]?.text]);
  expect(again.map((p) => p.deliveryTag)).toEqual([first[0]?.deliveryTag, first[2]?.deliveryTag]);
  expect(await t.size('q')).toBe(1);
});

test('a pop without acks sent again under the same request gets the same messages (nothing is unacked to rebuild them from)', async () => {
  await publishTasks(['n1', 'n2']);
  const first = await t.popMany(['q'], 2, true, { id: 'req-n' });
  const again = await t.popMany(['q'], 2, true, { id: 'req-n' });
  expect(again.map((p) => p.text)).toEqual(first.map((p) => p.text));
  expect(first.map((p) => idOf(p.text))).toEqual(['n1', 'n2']);
  expect(await s.redis.hlen(s.keys.unacked)).toBe(0);
});

test('reject with requeue puts the message at the back, marked redelivered; restore puts it at the front', async () => {
  await publishTasks(['r1', 'r2', 'r3']);
  const first = await t.pop(['q']);
  await t.reject(first?.deliveryTag ?? '', true);
  const second = await t.pop(['q']);
  expect(idOf(second?.text ?? '')).toBe('r2');
  await t.restore(second?.deliveryTag ?? '');
  const again = await t.pop(['q']);
  expect(idOf(again?.text ?? '')).toBe('r2');
  expect(again?.envelope?.redelivered).toBe(true);
  expect(again?.envelope?.raw.properties.headers).toMatchObject({ redelivered: true, task: 'tasks.add' });
  const rest: string[] = [];
  for (let p = await t.pop(['q']); p; p = await t.pop(['q'])) rest.push(idOf(p.text));
  expect(rest).toEqual(['r3', 'r1']);
  expect(await t.unackedCount()).toBe(3);
});

test('restore after the visibility timeout: only messages older than it, and not while another holds unacked_mutex', async () => {
  await publishTasks(['v1', 'v2']);
  const old = await t.pop(['q']);
  await s.redis.zadd(s.keys.unackedIndex, Date.now() / 1000 - 120, old?.deliveryTag ?? '');
  await t.pop(['q']);
  await s.redis.set(s.keys.unackedMutex, 'python-worker', 'EX', 60);
  expect(await t.restoreVisible(60)).toBeNull();
  expect(await t.size('q')).toBe(0);
  await s.redis.del(s.keys.unackedMutex);
  expect(await t.restoreVisible(60)).toBe(1);
  expect(await t.size('q')).toBe(1);
  expect(await t.unackedCount()).toBe(1);
  expect(await s.redis.exists(s.keys.unackedMutex)).toBe(0);
});

test('publishing to a named exchange goes through _kombu.binding.<exchange>; a restore finds its queue there too', async () => {
  await t.bind('ex', 'rk', 'q1');
  await t.bind('ex', 'other', 'q2');
  const m = task('b1');
  expect(await t.publish('ex', 'rk', m.body, m.properties)).toBe(1);
  expect(await t.publish('ex', 'nobody', m.body, m.properties)).toBe(0);
  const p = await t.pop(['q1', 'q2']);
  expect(p?.queue).toBe('q1');
  expect(await t.restore(p?.deliveryTag ?? '')).toBe(1);
  expect(await t.size('q1')).toBe(1);
  expect(await t.size('q2')).toBe(0);
});

test('a restored message that no binding routes is kept on the unroutable list, not dropped', async () => {
  await t.bind('gone', 'rk', 'q1');
  const m = task('x1');
  await t.publish('gone', 'rk', m.body, m.properties);
  const p = await t.pop(['q1']);
  await s.redis.del(s.keys.binding('gone'));
  expect(await t.restore(p?.deliveryTag ?? '')).toBe(0);
  expect(await s.redis.llen(s.keys.unroutable)).toBe(1);
  expect(await t.unackedCount()).toBe(0);
});

describe('the delayed set', () => {
  test('defer moves an unacked message into the set and out of unacked in one step; moveDue brings it back once due', async () => {
    const m = task('d1');
    await t.publish('', 'q', m.body, m.properties);
    const p = await t.pop(['q']);
    const due = Date.now() + 60_000;
    expect(await t.defer(p?.deliveryTag ?? '', due)).toBe(true);
    expect(await t.unackedCount()).toBe(0);
    expect(await t.delayedCount()).toBe(1);
    expect(await t.nextDue()).toBe(due);
    expect(await t.defer(p?.deliveryTag ?? '', due)).toBe(false);
    expect(await t.moveDue(due - 1)).toBe(0);
    expect(await t.moveDue(due)).toBe(1);
    expect(await t.delayedCount()).toBe(0);
    const back = await t.pop(['q']);
    expect(idOf(back?.text ?? '')).toBe('d1');
    expect(back?.envelope?.redelivered).toBe(false);
  });

  test('concurrent schedulers on separate connections move each due message exactly once', async () => {
    const m = task('c');
    for (let i = 0; i < 300; i++) {
      await t.publishDelayed('', 'q', m.body, { ...m.properties, correlationId: `c${i}` }, Date.now() - 1);
    }
    const others = [0, 1, 2, 3].map(() => new KombuRedis(s.connect(), s.keys));
    const moved = await Promise.all(
      others.map(async (o) => {
        let n = 0;
        for (let k = await o.moveDue(Date.now(), 7); k > 0; k = await o.moveDue(Date.now(), 7)) n += k;
        return n;
      }),
    );
    expect(moved.reduce((a, b) => a + b, 0)).toBe(300);
    expect(await t.size('q')).toBe(300);
    expect(await t.delayedCount()).toBe(0);
  });
});

describe('the same layout as kombu itself (Debian kombu 5.2.4)', () => {
  test('kombu reads what we publish, and its ack empties the unacked hash', async () => {
    const m = task('k1', 5);
    await t.publish('', 'q', m.body, m.properties);
    const got = (await kombu(s.prefix, 'get', 'q')) as Record<string, Record<string, unknown>>;
    expect(got.headers).toMatchObject({ task: 'tasks.add', id: 'k1' });
    expect(got.properties).toMatchObject({ correlation_id: 'k1', priority: 5 });
    expect(got.delivery_info).toMatchObject({ exchange: '', routing_key: 'q' });
    expect(got.unacked_after_ack).toBe(0);
  }, 60_000);

  test('a message a crashed kombu consumer left unacked is restored by us', async () => {
    const m = task('k2');
    await t.publish('', 'q', m.body, m.properties);
    const tag = await kombu(s.prefix, 'hold', 'q');
    expect(await s.redis.hexists(s.keys.unacked, String(tag))).toBe(1);
    expect(await t.restoreVisible(0, 1000, Date.now() + 1000)).toBe(1);
    const p = await t.pop(['q']);
    expect(idOf(p?.text ?? '')).toBe('k2');
    expect(p?.envelope?.redelivered).toBe(true);
  }, 60_000);

  test("a message we left unacked is restored by kombu's restore_visible, and kombu reads it", async () => {
    const m = task('k3');
    await t.publish('', 'q', m.body, m.properties);
    const p = await t.pop(['q']);
    await s.redis.zadd(s.keys.unackedIndex, Date.now() / 1000 - 100, p?.deliveryTag ?? '');
    expect(await kombu(s.prefix, 'restore', '10')).toBe(0);
    const got = (await kombu(s.prefix, 'get', 'q')) as Record<string, Record<string, unknown>>;
    expect(got.headers).toMatchObject({ id: 'k3', redelivered: true });
    expect(got.delivery_info).toMatchObject({ redelivered: true });
  }, 60_000);

  test('Python Celery publishes into our keys under its global_keyprefix', async () => {
    await kombu(s.prefix, 'publish', 'pyq', '3');
    expect(await t.size('pyq')).toBe(3);
    expect(await s.redis.smembers(s.keys.binding('pyq'))).toEqual([KombuKeys.bindingMember('pyq', 'pyq')]);
  }, 60_000);
});
