/**
 * What the shipped worker holds in memory at once on Redis is bounded whatever the messages weigh: with 20
 * queued messages of 20 MB (over the 8 MiB body limit) and 20 good ones, `dist/tasks/main.js` never fetches a
 * heavy body (the pop leaves it in Redis and the dead-letter copy is made there): its kernel high-water mark
 * (VmHWM) stays under 200 MB (66–69 MB measured, what it uses at rest; 1.45 GB when twenty were fetched at
 * once, 430–480 MB when one was), the 20 heavy ones are dead-lettered whole with the size reason and the 20 good
 * ones succeed.
 */
import { randomUUID } from 'node:crypto';
import { KombuRedis } from '../../lib/broker/redis/transport.js';
import { waitFor } from '../support/wait.js';
import {
  GOOD,
  HEAVY,
  HEAVY_BYTES,
  type MeasuredWorker,
  heavyAndGood,
  startMeasuredWorker,
} from '../support/heavy-messages.js';
import { REDIS_URL, redisScopeForBlock } from '../support/redis.js';
import { ResultReader } from '../support/results.js';

describe('the shipped worker on Redis with 20 MB messages queued', () => {
  let worker: MeasuredWorker | undefined;
  const results = new ResultReader();
  const block = redisScopeForBlock(async () => {
    await worker?.process.stop();
    await results.close();
  });

  test('never fetches a heavy body: peak RSS under 200 MB, the 20 heavy ones dead-lettered whole for their size, the 20 good ones succeed', async () => {
    const { s } = block;
    const queue = `heavy_${randomUUID().slice(0, 8)}`;
    const transport = new KombuRedis(s.redis, s.keys);
    const good: string[] = [];
    // Heavy and good interleaved, all queued before the worker starts (so its first pops find them all).
    for (const m of heavyAndGood()) {
      if (!m.heavy) good.push(m.id);
      await transport.publish('', queue, m.body, {
        contentType: 'application/json',
        contentEncoding: 'utf-8',
        correlationId: m.id,
        deliveryMode: 2,
        priority: 0,
        headers: m.headers,
      });
    }
    worker = startMeasuredWorker(queue, {
      CELERY_BROKER_URL: REDIS_URL,
      CELERY_BROKER_TRANSPORT_OPTIONS: JSON.stringify({ global_keyprefix: s.prefix }),
    });
    const dlq = s.keys.queue(`${queue}.dead_letter`, 0);
    await waitFor(async () => (await s.redis.llen(dlq)) >= HEAVY, 240_000, 200);
    const states = await Promise.all(good.map(async (id) => (await results.ready(id, 60_000)).status));
    const peak = worker.peakMb();
    const reasons: string[] = [];
    for (let i = 0; i < HEAVY; i++) {
      const text = await s.redis.lindex(dlq, i);
      const copy = JSON.parse(text ?? '{}') as { body?: string; headers?: Record<string, unknown> };
      const reason = copy.headers?.['x-dead-letter-reason'];
      reasons.push(typeof reason === 'string' ? reason : '');
      // The copy keeps the body, byte for byte: the 20 MB argument is all there.
      const args = (JSON.parse(Buffer.from(copy.body ?? '', 'base64').toString('utf8')) as [string[]])[0];
      expect(args[0]).toHaveLength(HEAVY_BYTES);
    }
    expect(reasons.filter((r) => /over the limit of \d+ bytes/.test(r))).toHaveLength(HEAVY);
    expect(good).toHaveLength(GOOD);
    expect(states).toEqual(good.map(() => 'SUCCESS'));
    // At rest about 65 MB; one heavy body fetched, decoded and copied costs about 250 MB more.
    expect(peak).toBeLessThan(200);
    expect(await s.redis.hlen(s.keys.unacked)).toBe(0);
  }, 300_000);
});
