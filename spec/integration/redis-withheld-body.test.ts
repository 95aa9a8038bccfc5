/**
 * A body over the size limit never leaves Redis (scripts.ts POP and DEAD_LETTER_WITHHELD), on the real Redis:
 * the pop sends the envelope without its body and with the body's exact size, the whole message stays in
 * `unacked`, and the dead-letter copy made inside Redis is the message as it was, byte for byte, with the
 * dead-letter headers, a new delivery tag and the dead-letter queue's delivery_info, readable by kombu itself.
 */
import { randomUUID } from 'node:crypto';
import { decodeEnvelope } from '../../lib/broker/redis/envelope.js';
import { RedisBroker } from '../../lib/broker/redis/redis-broker.js';
import { RedisDelivery, type Settler } from '../../lib/broker/redis/delivery.js';
import { createLogger } from '../../lib/logger.js';
import { decodeTaskMessage } from '../../lib/protocol/index.js';
import { REDIS_URL, kombuRedisPerTest } from '../support/redis.js';
import { pythonJson } from '../support/python-script.js';

const kombu = (prefix: string, ...args: string[]): Promise<unknown> =>
  pythonJson('spec/interop/python/kombu_redis.py', [REDIS_URL, prefix, ...args], { timeoutMs: 60_000 });

const LIMIT = 1024;
/** A delivery popped by the test itself, which it settles by hand: the broker only dead-letters it. */
const UNSETTLED: Settler = { settleByTag: () => undefined, owns: () => true };
const WITHHOLD = { bytes: Number.MAX_SAFE_INTEGER, alone: true, withholdOver: LIMIT };
const headersOf = (text: string) => (JSON.parse(text) as { headers: Record<string, unknown> }).headers;

const per = kombuRedisPerTest();

/** An envelope written as text, so the test controls its key order and spelling as a producer could. */
function envelope(
  body: string,
  parts: { headers?: string; properties?: string; first?: 'headers' | 'properties'; encoding?: 'base64' | null } = {},
): { text: string; tag: string } {
  const tag = randomUUID();
  const enc = parts.encoding === undefined ? 'base64' : parts.encoding;
  const props =
    parts.properties ??
    `{"correlation_id": "c1", "delivery_mode": 2, "delivery_info": {"exchange": "", "routing_key": "q"}, "priority": 0${enc ? `, "body_encoding": "${enc}"` : ''}, "delivery_tag": "${tag}"}`;
  const headers = parts.headers ?? '{"lang": "py", "task": "t.heavy", "id": "h1"}';
  const middle =
    parts.first === 'properties'
      ? `"properties": ${props}, "headers": ${headers}`
      : `"headers": ${headers}, "properties": ${props}`;
  return {
    text: `{"body": ${JSON.stringify(body)}, "content-encoding": "utf-8", "content-type": "application/json", ${middle}}`,
    tag,
  };
}

async function withheldCopy(e: { text: string }, queue = 'q'): Promise<{ copy: string; dlqLists: string[] }> {
  await per.s.redis.lpush(per.s.keys.queue(queue, 0), e.text);
  const [p] = await per.t.popMany([queue], 10, false, undefined, WITHHOLD);
  expect(p?.withheld).toBeGreaterThan(LIMIT);
  const ok = await per.t.deadLetterWithheld(p?.deliveryTag ?? '', `${queue}.dead_letter`, {
    'x-dead-letter-reason': 'too heavy',
  });
  expect(ok).toBe(true);
  const lists = await per.s.redis.keys(`${per.s.prefix}${queue}.dead_letter*`);
  const copy = await per.s.redis.lindex(lists[0] ?? '', 0);
  return { copy: copy ?? '', dlqLists: lists };
}

test('a body over the limit comes without its body and with its exact size; the whole message stays unacked', async () => {
  const body = Buffer.alloc(LIMIT * 3 + 1, 7).toString('base64');
  const e = envelope(body);
  await per.s.redis.lpush(per.s.keys.queue('q', 0), e.text);
  const [p] = await per.t.popMany(['q'], 10, false, undefined, WITHHOLD);
  expect(p?.withheld).toBe(LIMIT * 3 + 1);
  expect(p?.envelope?.raw.body.length).toBe(0);
  expect(p?.envelope?.raw.withheldBodyBytes).toBe(LIMIT * 3 + 1);
  expect(p?.envelope?.raw.properties.headers).toEqual({ lang: 'py', task: 't.heavy', id: 'h1' });
  expect(p?.text.length).toBeLessThan(400);
  const entry = JSON.parse((await per.s.redis.hget(per.s.keys.unacked, e.tag)) ?? '[]') as unknown[];
  expect((entry[0] as { body: string }).body).toBe(body);
  // The decoder refuses it for its size, before anything else, as it refuses a fetched body.
  expect(() =>
    decodeTaskMessage(p?.envelope?.raw ?? { body: Buffer.alloc(0), properties: {} }, {
      accept: ['json'],
      maxBodyBytes: LIMIT,
    }),
  ).toThrow(`the body is ${LIMIT * 3 + 1} bytes, over the limit of ${LIMIT} bytes`);
});

test('a body at the limit, a line-broken base64 body, and every body of a no-ack pop come whole', async () => {
  const atLimit = envelope(Buffer.alloc(LIMIT, 1).toString('base64'));
  const broken = envelope(
    `${Buffer.alloc(LIMIT * 2, 1)
      .toString('base64')
      .slice(0, 100)}\n${Buffer.alloc(LIMIT * 2, 1)
      .toString('base64')
      .slice(100)}`,
  );
  await per.s.redis.lpush(per.s.keys.queue('q', 0), atLimit.text, broken.text);
  const popped = await per.t.popMany(['q'], 10, false, undefined, WITHHOLD);
  expect(popped.map((p) => p.withheld)).toEqual([undefined, undefined]);
  expect(popped.map((p) => p.text)).toEqual([atLimit.text, broken.text]);
  const heavy = envelope(Buffer.alloc(LIMIT * 2, 1).toString('base64'));
  await per.s.redis.lpush(per.s.keys.queue('q', 0), heavy.text);
  const [p] = await per.t.popMany(['q'], 10, true, undefined, WITHHOLD);
  expect(p?.withheld).toBeUndefined();
  expect(p?.text).toBe(heavy.text);
});

test('a pop sent again under the same request sends the same stub of a heavy body, and the light message whole', async () => {
  const heavy = envelope(Buffer.alloc(LIMIT * 2, 1).toString('base64'));
  const light = envelope(Buffer.alloc(10, 1).toString('base64'));
  await per.s.redis.lpush(per.s.keys.queue('q', 0), heavy.text, light.text);
  const first = await per.t.popMany(['q'], 10, false, { id: 'req-w' }, WITHHOLD);
  const again = await per.t.popMany(['q'], 10, false, { id: 'req-w' }, WITHHOLD);
  expect(first.map((p) => p.withheld)).toEqual([LIMIT * 2, undefined]);
  expect(again.map((p) => [p.text, p.withheld, p.deliveryTag])).toEqual(
    first.map((p) => [p.text, p.withheld, p.deliveryTag]),
  );
  expect(first[0]?.text).not.toBe(heavy.text);
  expect(first[1]?.text).toBe(light.text);
});

test('a utf-8 body (no body_encoding) is measured in bytes, as the decoder measures it', async () => {
  const body = 'é'.repeat(LIMIT / 2 + 1); // LIMIT + 2 bytes in UTF-8, in fewer characters
  await per.s.redis.lpush(per.s.keys.queue('q', 0), envelope(body, { encoding: null }).text);
  const [p] = await per.t.popMany(['q'], 10, false, undefined, WITHHOLD);
  expect(p?.withheld).toBe(LIMIT + 2);
  // Escapes count as the bytes they stand for: a body of quotes is twice as long in the text as in bytes.
  const quoted = envelope('"'.repeat(LIMIT - 424) + 'x'.repeat(424), { encoding: null });
  const over = envelope('"'.repeat(LIMIT) + 'x', { encoding: null });
  await per.s.redis.lpush(per.s.keys.queue('q', 0), quoted.text, over.text);
  const popped = await per.t.popMany(['q'], 10, false, undefined, WITHHOLD);
  expect(popped.map((x) => x.withheld)).toEqual([undefined, LIMIT + 1]);
  expect(popped[0]?.text).toBe(quoted.text);
});

test('the dead-letter copy is the message byte for byte, with the headers added, a new tag and the dead-letter queue as its route', async () => {
  const body = Buffer.alloc(LIMIT * 2, 9).toString('base64');
  const e = envelope(body);
  const { copy } = await withheldCopy(e);
  const back = decodeEnvelope(copy);
  expect(back.raw.body.equals(Buffer.alloc(LIMIT * 2, 9))).toBe(true);
  expect(back.raw.properties.headers).toEqual({
    lang: 'py',
    task: 't.heavy',
    id: 'h1',
    'x-dead-letter-reason': 'too heavy',
  });
  expect(back.deliveryTag).not.toBe(e.tag);
  expect(back.routingKey).toBe('q.dead_letter');
  // Everything but what was changed is the text as it came.
  const untouched = (text: string) =>
    text
      .replace(/"delivery_info": \{[^}]*\}/, '')
      .replace(/"delivery_tag": "[^"]*"/, '')
      .replace(/"headers": \{.*?\}, "properties"/, '');
  expect(untouched(copy)).toBe(untouched(e.text));
});

test('the splice finds the top-level headers whatever their place, their content or what the strings hold', async () => {
  const tricky =
    '{"note": "a \\"headers\\": {x} ]", "nested": {"headers": {"a": [1, {"b": "}"}]}}, "x-dead-letter-reason": "older"}';
  const { copy } = await withheldCopy(
    envelope(Buffer.alloc(LIMIT * 2).toString('base64'), { headers: tricky, first: 'properties' }),
  );
  expect(headersOf(copy)).toEqual({
    note: 'a "headers": {x} ]',
    nested: { headers: { a: [1, { b: '}' }] } },
    'x-dead-letter-reason': 'too heavy',
  });
  const { copy: empty } = await withheldCopy(
    envelope(Buffer.alloc(LIMIT * 2).toString('base64'), { headers: '{ }' }),
    'q2',
  );
  expect(headersOf(empty)).toEqual({ 'x-dead-letter-reason': 'too heavy' });
});

test('a message kombu published (Python Celery) is withheld, copied at its priority, and kombu reads the copy', async () => {
  const id = (await kombu(per.s.prefix, 'heavy', 'pq', String(LIMIT * 4), '3')) as string;
  const [p] = await per.t.popMany(['pq'], 10, false, undefined, WITHHOLD);
  expect(p?.withheld).toBeGreaterThan(LIMIT * 4);
  expect(p?.envelope?.raw.properties.headers).toMatchObject({ id, task: 'celery.accumulate' });
  await per.t.deadLetterWithheld(p?.deliveryTag ?? '', 'pq.dead_letter', { 'x-dead-letter-reason': 'too heavy' });
  await per.t.ack(p?.deliveryTag ?? '');
  // kombu's priority step 3 of the dead-letter queue, as a publish at priority 3 lands.
  expect(await per.s.redis.llen(per.s.keys.queue('pq.dead_letter', 3))).toBe(1);
  const got = (await kombu(per.s.prefix, 'get', 'pq.dead_letter')) as {
    body: string;
    headers: Record<string, unknown>;
  };
  expect(got.headers).toMatchObject({
    id,
    note: 'a "quoted" {brace} and \\ in a header',
    'x-dead-letter-reason': 'too heavy',
  });
  expect((JSON.parse(got.body) as unknown[][])[0]?.[0]).toBe('x'.repeat(LIMIT * 4));
});

/** A broker on this test's keys that withholds bodies over LIMIT, connected. */
async function limitedBroker(): Promise<RedisBroker> {
  const broker = new RedisBroker({
    url: REDIS_URL,
    logger: createLogger({ level: 'error' }),
    keyPrefix: per.s.prefix,
    maxBodyBytes: LIMIT,
  });
  await broker.connect();
  return broker;
}

test('RedisBroker with a body limit dead-letters a withheld message by copying it inside Redis', async () => {
  const broker = await limitedBroker();
  try {
    const e = envelope(Buffer.alloc(LIMIT * 2, 5).toString('base64'));
    await per.s.redis.lpush(per.s.keys.queue('q', 0), e.text);
    const [p] = await per.t.popMany(['q'], 10, false, undefined, WITHHOLD);
    const delivery = new RedisDelivery(UNSETTLED, 'q', p ?? (await Promise.reject(new Error('nothing popped'))));
    await broker.deadLetter(delivery, { queue: 'q.dead_letter', reason: 'over the limit', by: 'test' });
    const copy = decodeEnvelope((await per.s.redis.lindex(per.s.keys.queue('q.dead_letter', 0), 0)) ?? '');
    expect(copy.raw.body.equals(Buffer.alloc(LIMIT * 2, 5))).toBe(true);
    expect(copy.raw.properties.headers).toMatchObject({
      'x-dead-letter-reason': 'over the limit',
      'x-original-queue': 'q',
    });
    await per.t.ack(p?.deliveryTag ?? '');
    await expect(broker.deadLetter(delivery, { queue: 'q.dead_letter', reason: 'again', by: 'test' })).rejects.toThrow(
      'no longer unacked',
    );
  } finally {
    await broker.close();
  }
});

test('an unreadable envelope sent without its body is dead-lettered whole from Redis, not as the text the worker got', async () => {
  const broker = await limitedBroker();
  try {
    // headers that are not an object: the envelope decoder refuses it, but its body is over the limit all the same.
    const e = envelope(Buffer.alloc(LIMIT * 2, 3).toString('base64'), { headers: '"not an object"' });
    await per.s.redis.lpush(per.s.keys.queue('q', 0), e.text);
    const [p] = await per.t.popMany(['q'], 10, false, undefined, WITHHOLD);
    const delivery = new RedisDelivery(UNSETTLED, 'q', p ?? (await Promise.reject(new Error('nothing popped'))));
    expect(delivery.unreadable).toBeDefined();
    expect(delivery.raw.withheldBodyBytes).toBe(LIMIT * 2);
    await broker.deadLetter(delivery, { queue: 'q.dead_letter', reason: 'unreadable', by: 'test' });
    const copy = JSON.parse((await per.s.redis.lindex(per.s.keys.queue('q.dead_letter', 0), 0)) ?? '{}') as {
      body: string;
      headers: Record<string, unknown>;
    };
    expect(Buffer.from(copy.body, 'base64').equals(Buffer.alloc(LIMIT * 2, 3))).toBe(true);
    expect(copy.headers).toMatchObject({ 'x-dead-letter-reason': 'unreadable' });
  } finally {
    await broker.close();
  }
});
