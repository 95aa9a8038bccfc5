/**
 * What a Redis worker refuses says why: an envelope that cannot be read is dead-lettered with the envelope's
 * own fault as the reason (not the stand-in content type it is handed on with), and an ETA in the year 9999
 * is refused to the dead-letter queue as on RabbitMQ (beyond the delay range, 2^28 − 1 s) instead of parked.
 */
import { randomUUID } from 'node:crypto';
import { encodeTaskMessage } from '../../lib/protocol/index.js';
import { PyDateTime } from '../../lib/protocol/values.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { waitFor } from '../support/wait.js';

let h: RedisHarness;
beforeAll(async () => {
  h = await startRedisWorker();
}, 60_000);
afterAll(async () => h.stop());

async function deadLetterReasons(n: number): Promise<string[]> {
  const dlq = h.scope.keys.queue(`${h.queue}.dead_letter`, 0);
  await waitFor(async () => (await h.scope.redis.llen(dlq)) >= n, 20_000, { stepMs: 100, what: `${n} dead-lettered` });
  const texts = await h.scope.redis.lrange(dlq, 0, -1);
  return texts.map((t) => {
    const reason = (JSON.parse(t) as { headers?: Record<string, unknown> }).headers?.['x-dead-letter-reason'];
    return typeof reason === 'string' ? reason : '';
  });
}

test('own wiring: an envelope whose body_encoding is unknown and one that is not JSON: each reason names the envelope fault', async () => {
  await h.scope.redis.del(h.scope.keys.queue(`${h.queue}.dead_letter`, 0));
  const list = h.scope.keys.queue(h.queue, 0);
  await h.scope.redis.lpush(
    list,
    JSON.stringify({ body: 'e30=', headers: {}, properties: { body_encoding: 'rot13', delivery_tag: randomUUID() } }),
  );
  await h.scope.redis.lpush(list, '{"body": "e30=", "properties": ');
  const reasons = await deadLetterReasons(2);
  expect(reasons).toHaveLength(2);
  expect(reasons.some((r) => /unknown body encoding "rot13"/.test(r))).toBe(true);
  expect(reasons.some((r) => /not JSON/.test(r))).toBe(true);
  for (const r of reasons) expect(r).not.toMatch(/content type/);
});

test('own wiring: an ETA in the year 9999 is refused to the dead-letter queue, not parked in the delayed set', async () => {
  await h.scope.redis.del(h.scope.keys.queue(`${h.queue}.dead_letter`, 0));
  const m = encodeTaskMessage({
    id: randomUUID(),
    task: 'test.add',
    args: [1, 1],
    kwargs: {},
    eta: new PyDateTime('9999-01-01T00:00:00+00:00'),
  });
  await h.broker.send(h.queue, m);
  const reasons = await deadLetterReasons(1);
  expect(reasons).toHaveLength(1);
  expect(reasons[0]).toMatch(/eta 9999-01-01T00:00:00\+00:00 is \d+ s away, beyond the delay topology's range/);
  expect(await h.scope.redis.zcard(h.scope.keys.delayed)).toBe(0);
});
