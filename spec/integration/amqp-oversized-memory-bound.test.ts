/**
 * What a RabbitMQ worker holds in memory at once is bounded whatever the messages weigh: with 20 queued
 * messages of 20 MB (over the 8 MiB body limit) interleaved with 20 good ones, and the worker at its default
 * prefetch for `-c 4` (16), its kernel high-water mark (VmHWM) stays under 400 MB (259–284 MB measured;
 * 420–461 MB with its consumers at the full prefetch from the start), the 20 heavy ones are dead-lettered with
 * the size reason and the 20 good ones run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Options } from 'amqplib';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { AMQP_URL, deleteQueues, uniqueName, withChannel } from '../support/amqp.js';
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

function procStatusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m?.[1] ? Number(m[1]) / 1024 : NaN;
}

function stamp(key: string, pad?: string): { body: Buffer; options: Options.Publish } {
  const id = randomUUID();
  const kwargs: Record<string, unknown> = { key, due_ms: Date.now() };
  if (pad !== undefined) kwargs.pad = pad;
  return {
    body: Buffer.from(JSON.stringify([[], kwargs, {}])),
    options: {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      correlationId: id,
      persistent: true,
      headers: { lang: 'py', task: 'test.stamp', id, root_id: id, retries: 0 },
    },
  };
}

async function messageCount(queue: string): Promise<number> {
  return withChannel(async (ch) => (await ch.checkQueue(queue)).messageCount).catch(() => 0);
}

afterAll(async () => closeRunCounter());

describe('a RabbitMQ worker with 20 MB messages queued', () => {
  let worker: ChildProcess | undefined;
  const queue = uniqueName('heavy');
  const key = `heavy:${randomUUID()}`;
  afterAll(async () => {
    await terminate(worker);
    await runCounter().del(`${key}:runs`, `${key}:late`, `${key}:by`);
    await deleteQueues([queue, `${queue}.dead_letter`]);
  });

  test('holds at most about one heavy message at once: peak RSS under 400 MB, the 20 heavy ones dead-lettered for their size, the 20 good ones run', async () => {
    const pad = 'x'.repeat(HEAVY_BYTES);
    // Heavy and good interleaved, all queued before the worker starts (so its first prefetch window is full of them).
    const conn = await amqp.connect(AMQP_URL);
    try {
      const ch = await conn.createConfirmChannel();
      await ch.assertQueue(queue, { durable: true });
      for (let i = 0; i < HEAVY; i++) {
        for (const m of [stamp(key, pad), stamp(key)]) ch.sendToQueue(queue, m.body, m.options);
        // One heavy body at a time in this process's socket buffers.
        await ch.waitForConfirms();
      }
    } finally {
      await conn.close().catch(() => undefined);
    }
    expect(await messageCount(queue)).toBe(HEAVY + GOOD);
    const w = spawn(process.execPath, ['--import', 'tsx', 'spec/support/worker-main.ts', '-Q', queue, '-c', '4'], {
      env: {
        ...process.env,
        CELERY_BROKER_URL: AMQP_URL,
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
        series.push(Math.round(procStatusMb(w.pid ?? 0, 'VmRSS')));
      } catch {
        /* gone */
      }
    }, 500);
    const dlq = `${queue}.dead_letter`;
    await until('20 dead-lettered and 20 run', async () => (await messageCount(dlq)) >= HEAVY && (await runCounter().hlen(`${key}:runs`)) >= GOOD, 240_000);
    const peak = procStatusMb(w.pid ?? 0, 'VmHWM');
    clearInterval(sampler);
    if (process.env.RSS_SERIES) console.log(series.join(' '));
    console.log(`peak RSS of the worker: ${peak.toFixed(0)} MB`);
    const reasons = await withChannel(async (ch) => {
      const out: string[] = [];
      for (;;) {
        const m = await ch.get(dlq, { noAck: true });
        if (m === false) return out;
        const reason: unknown = m.properties.headers?.['x-dead-letter-reason'];
        out.push(typeof reason === 'string' ? reason : Buffer.isBuffer(reason) ? reason.toString('utf8') : '');
      }
    });
    expect(reasons).toHaveLength(HEAVY);
    expect(reasons.filter((r) => /over the limit of \d+ bytes/.test(r))).toHaveLength(HEAVY);
    expect(await runCounter().hlen(`${key}:runs`)).toBe(GOOD);
    expect(peak).toBeLessThan(400);
  }, 300_000);
});
