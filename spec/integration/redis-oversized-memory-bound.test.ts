/**
 * What a Redis worker holds in memory at once is bounded whatever the messages weigh: with 20 queued messages
 * of 20 MB (over the 8 MiB body limit) and 20 good ones, the worker never fetches a heavy body (the pop
 * leaves it in Redis and the dead-letter copy is made there): its kernel high-water mark (VmHWM) stays under
 * 400 MB (about 120 MB measured; 1.45 GB when twenty were fetched at once, 430–480 MB when one was), the 20
 * heavy ones are dead-lettered whole with the size reason and the 20 good ones run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { KombuRedis } from '../../lib/broker/redis/transport.js';
import { REDIS_URL, type RedisScope, redisScope } from '../support/redis.js';
import { terminate } from '../support/child.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';

const HEAVY = 20;
const GOOD = 20;
const HEAVY_BYTES = 20 * 1024 * 1024;

async function until(what: string, cond: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m?.[1] ? Number(m[1]) / 1024 : NaN;
}

function stamp(key: string, pad?: string) {
  const id = randomUUID();
  const kwargs: Record<string, unknown> = { key, due_ms: Date.now() };
  if (pad !== undefined) kwargs.pad = pad;
  return {
    body: Buffer.from(JSON.stringify([[], kwargs, {}])),
    properties: {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      correlationId: id,
      deliveryMode: 2 as const,
      priority: 0,
      headers: { lang: 'py', task: 'test.stamp', id, root_id: id, retries: 0 },
    },
  };
}

afterAll(async () => closeRunCounter());

describe('a Redis worker with 20 MB messages queued', () => {
  let s: RedisScope;
  let worker: ChildProcess | undefined;
  const key = `heavy:${randomUUID()}`;
  beforeAll(() => {
    s = redisScope();
  });
  afterAll(async () => {
    await terminate(worker);
    await runCounter().del(`${key}:runs`, `${key}:late`, `${key}:by`);
    await s.close();
  });

  test('never fetches a heavy body: peak RSS under 400 MB, the 20 heavy ones dead-lettered whole for their size, the 20 good ones run', async () => {
    const queue = `heavy_${randomUUID().slice(0, 8)}`;
    const transport = new KombuRedis(s.redis, s.keys);
    const pad = 'x'.repeat(HEAVY_BYTES);
    // Heavy and good interleaved, all queued before the worker starts (so its first pops find them all).
    for (let i = 0; i < HEAVY; i++) {
      const h = stamp(key, pad);
      await transport.publish('', queue, h.body, h.properties);
      const g = stamp(key);
      await transport.publish('', queue, g.body, g.properties);
    }
    const w = spawn(process.execPath, ['--import', 'tsx', 'spec/support/worker-main.ts', '-Q', queue, '-c', '4'], {
      env: {
        ...process.env,
        CELERY_BROKER_URL: REDIS_URL,
        CELERY_BROKER_TRANSPORT_OPTIONS: JSON.stringify({ global_keyprefix: s.prefix }),
        CELERY_RESULT_BACKEND: 'disabled',
        CELERY_WORKER_HOSTNAME: `${queue}@test`,
        LOG_LEVEL: 'error',
      },
      stdio: 'ignore',
    });
    worker = w;
    const series: number[] = [];
    const sampler = setInterval(() => {
      try {
        const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${w.pid ?? 0}/status`, 'utf8'));
        series.push(Math.round(Number(m?.[1] ?? 0) / 1024));
      } catch {
        /* gone */
      }
    }, 500);
    const dlq = s.keys.queue(`${queue}.dead_letter`, 0);
    await until('20 dead-lettered and 20 run', async () => (await s.redis.llen(dlq)) >= HEAVY && (await runCounter().hlen(`${key}:runs`)) >= GOOD, 240_000);
    const peak = peakRssMb(w.pid ?? 0);
    clearInterval(sampler);
    if (process.env.RSS_SERIES) console.log(series.join(' '));
    console.log(`peak RSS of the worker: ${peak.toFixed(0)} MB`);
    const reasons: string[] = [];
    for (let i = 0; i < HEAVY; i++) {
      const text = await s.redis.lindex(dlq, i);
      const copy = JSON.parse(text ?? '{}') as { body?: string; headers?: Record<string, unknown> };
      const reason = copy.headers?.['x-dead-letter-reason'];
      reasons.push(typeof reason === 'string' ? reason : '');
      // The copy keeps the body, byte for byte: the pad is all there.
      const kwargs = (JSON.parse(Buffer.from(copy.body ?? '', 'base64').toString('utf8')) as [unknown, { pad?: string }])[1];
      expect(kwargs.pad).toHaveLength(HEAVY_BYTES);
    }
    expect(reasons.filter((r) => /over the limit of \d+ bytes/.test(r))).toHaveLength(HEAVY);
    expect(await runCounter().hlen(`${key}:runs`)).toBe(GOOD);
    // The baseline is about 110 MB; one heavy body fetched, decoded and copied cost about 250 MB more.
    expect(peak).toBeLessThan(400);
    expect(await s.redis.hlen(s.keys.unacked)).toBe(0);
  }, 300_000);
});
