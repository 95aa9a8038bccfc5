/**
 * What a Redis worker holds in memory at once is bounded whatever the messages weigh: with 20 queued messages
 * of 20 MB (over the 8 MiB body limit) and 20 good ones, the worker never fetches a heavy body (the pop
 * leaves it in Redis and the dead-letter copy is made there): its kernel high-water mark (VmHWM) stays under
 * 400 MB (about 120 MB measured; 1.45 GB when twenty were fetched at once, 430–480 MB when one was), the 20
 * heavy ones are dead-lettered whole with the size reason and the 20 good ones run.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { KombuRedis } from '../../lib/broker/redis/transport.js';
import { waitFor } from '../support/wait.js';
import { GOOD, HEAVY, HEAVY_BYTES, heavyAndGood, startMeasuredWorker } from '../support/heavy-messages.js';
import { REDIS_URL, redisScopeForBlock } from '../support/redis.js';
import { terminate } from '../support/child.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';

afterAll(async () => closeRunCounter());

describe('own wiring: a Redis worker with 20 MB messages queued', () => {
  let worker: ChildProcess | undefined;
  const key = `heavy:${randomUUID()}`;
  const block = redisScopeForBlock(async () => {
    await terminate(worker);
    await runCounter().del(`${key}:runs`, `${key}:late`, `${key}:by`);
  });

  test('never fetches a heavy body: peak RSS under 400 MB, the 20 heavy ones dead-lettered whole for their size, the 20 good ones run', async () => {
    const { s } = block;
    const queue = `heavy_${randomUUID().slice(0, 8)}`;
    const transport = new KombuRedis(s.redis, s.keys);
    // Heavy and good interleaved, all queued before the worker starts (so its first pops find them all).
    for (const m of heavyAndGood(key)) {
      await transport.publish('', queue, m.body, {
        contentType: 'application/json',
        contentEncoding: 'utf-8',
        correlationId: m.id,
        deliveryMode: 2,
        priority: 0,
        headers: m.headers,
      });
    }
    const w = startMeasuredWorker(queue, {
      CELERY_BROKER_URL: REDIS_URL,
      CELERY_BROKER_TRANSPORT_OPTIONS: JSON.stringify({ global_keyprefix: s.prefix }),
    });
    worker = w.process;
    const dlq = s.keys.queue(`${queue}.dead_letter`, 0);
    await waitFor(
      async () => (await s.redis.llen(dlq)) >= HEAVY && (await runCounter().hlen(`${key}:runs`)) >= GOOD,
      240_000,
      200,
    );
    const peak = w.peakMb();
    const reasons: string[] = [];
    for (let i = 0; i < HEAVY; i++) {
      const text = await s.redis.lindex(dlq, i);
      const copy = JSON.parse(text ?? '{}') as { body?: string; headers?: Record<string, unknown> };
      const reason = copy.headers?.['x-dead-letter-reason'];
      reasons.push(typeof reason === 'string' ? reason : '');
      // The copy keeps the body, byte for byte: the pad is all there.
      const kwargs = (
        JSON.parse(Buffer.from(copy.body ?? '', 'base64').toString('utf8')) as [unknown, { pad?: string }]
      )[1];
      expect(kwargs.pad).toHaveLength(HEAVY_BYTES);
    }
    expect(reasons.filter((r) => /over the limit of \d+ bytes/.test(r))).toHaveLength(HEAVY);
    expect(await runCounter().hlen(`${key}:runs`)).toBe(GOOD);
    // The baseline is about 110 MB; one heavy body fetched, decoded and copied cost about 250 MB more.
    expect(peak).toBeLessThan(400);
    expect(await s.redis.hlen(s.keys.unacked)).toBe(0);
  }, 300_000);
});
