/**
 * Beat against the real RabbitMQ and Redis: what it sends our worker runs; last runs survive a restart
 * (no burst, no skipped run) in a file and in Redis; two replicas never send the same tick, and the standby
 * takes over when the holder is killed; a queue with no consumer is reported.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Beat } from '../../beat/beat.js';
import { every } from '../../lib/beat/schedules.js';
import type { BeatEntry } from '../../tasks/beat-schedule.js';
import { FileStore, RedisStore, type ScheduleStore } from '../../beat/store.js';
import { AmqpBroker } from '../../lib/broker/amqp/amqp-broker.js';
import { AmqpLock } from '../../lib/broker/amqp/amqp-lock.js';
import { nullLogger } from '../../lib/logger.js';
import { AMQP_URL, REDIS_URL, deleteQueues, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type BeatSend, spawnBeat } from '../support/beat-process.js';
import { startWorker } from '../support/harness.js';

const logger = nullLogger();

function beatWith(entries: BeatEntry[], store: ScheduleStore, lockName = uniqueName('lock'), now?: () => number): Beat {
  return new Beat({
    entries,
    store,
    broker: new AmqpBroker({ url: AMQP_URL, logger }),
    lock: new AmqpLock(AMQP_URL, lockName, logger),
    logger,
    maxLoopMs: 200,
    ...(now ? { now } : {}),
  });
}

const entry = (queue: string, seconds: number, name = 'e'): BeatEntry => ({
  name,
  task: 'test.add',
  schedule: every(seconds),
  args: [2, 3],
  kwargs: {},
  options: { queue },
});
const count = (queue: string) => withChannel(async (ch) => (await ch.checkQueue(queue)).messageCount);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('own wiring: what Beat sends, our worker runs', async () => {
  const h = await startWorker();
  const beat = beatWith([entry(h.queue, 1)], new FileStore(join(mkdtempSync(join(tmpdir(), 'beat-')), 's.json')));
  try {
    await beat.start();
    await waitFor(() => ((h.worker.processed.get('test.add') ?? 0) >= 2 ? true : undefined), 10_000);
    expect(h.worker.processed.get('test.add')).toBeGreaterThanOrEqual(2);
  } finally {
    await beat.stop();
    await h.stop();
  }
});

describe.each([
  [
    'a file',
    () => {
      const path = join(mkdtempSync(join(tmpdir(), 'beat-')), 'schedule.json');
      return () => new FileStore(path);
    },
  ],
  [
    'Redis',
    () => {
      const key = uniqueName('beat-store');
      return () => new RedisStore(REDIS_URL, key);
    },
  ],
])('own wiring: last runs kept in %s', (_name, location) => {
  test('survive a restart: an hourly entry run 30 min ago is not sent again; one run 61 min ago is sent once', async () => {
    const queue = uniqueName('beatq');
    const makeStore = location();
    const store = makeStore();
    const hour = 3_600_000;
    const t0 = Date.now();
    await store.save('recent', { lastRunAt: t0 - hour / 2, totalRunCount: 5 });
    await store.save('overdue', { lastRunAt: t0 - 61 * 60_000, totalRunCount: 5 });
    const entries = [entry(queue, 3600, 'recent'), entry(queue, 3600, 'overdue'), entry(queue, 3600, 'new')];
    try {
      const first = beatWith(entries, store);
      await first.start();
      await waitFor(async () => ((await count(queue).catch(() => 0)) >= 1 ? true : undefined));
      await sleep(500);
      await first.stop();
      expect(await count(queue)).toBe(1); // only the overdue one; a new entry waits one interval, as in Celery

      const again = makeStore();
      const state = await again.load();
      expect(state.get('overdue')?.totalRunCount).toBe(6);
      expect(state.get('recent')).toEqual({ lastRunAt: t0 - hour / 2, totalRunCount: 5 });
      expect(state.get('new')?.totalRunCount).toBe(0);
      const second = beatWith(entries, again);
      await second.start();
      await sleep(1000);
      await second.stop();
      expect(await count(queue)).toBe(1); // a restart sends nothing more
    } finally {
      await deleteQueues([queue]);
    }
  });
});

test('own wiring: two replicas: one sender at a time, each tick once; SIGKILL the sender and the other takes over', async () => {
  const queue = uniqueName('beatq');
  const storeKey = uniqueName('beat-store');
  const lock = uniqueName('lock');
  const sends = new Map<number, string[]>(); // pid → task ids sent
  const env = { BEAT_QUEUE: queue, BEAT_STORE_KEY: storeKey, BEAT_LOCK: lock, AMQP_URL, REDIS_URL };
  const heard = (s: BeatSend, p: ChildProcess) => {
    if (p.pid) sends.set(p.pid, [...(sends.get(p.pid) ?? []), s.id]);
  };
  const a = spawnBeat(env, heard);
  const b = spawnBeat(env, heard);
  try {
    // New entries wait one interval; then one replica sends every second.
    await waitFor(() => ([...sends.values()].flat().length >= 4 ? true : undefined), 30_000);
    const senders = [...sends.keys()];
    expect(senders).toHaveLength(1);
    const holder = senders[0] === a.pid ? a : b;
    const standby = holder === a ? b : a;
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
    const before = [...sends.values()].flat().length;
    await waitFor(() => ((sends.get(standby.pid ?? -1)?.length ?? 0) >= 3 ? true : undefined), 20_000);
    const ids = [...sends.values()].flat();
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThan(before);
    // Every message in the queue was announced by exactly one sender: no tick went out twice.
    await waitFor(async () => ((await count(queue)) >= ids.length ? true : undefined), 5_000);
    const r = new Redis(REDIS_URL);
    const runs = JSON.parse(String(await r.hget(storeKey, 'tick'))) as { total_run_count: number };
    await r.quit();
    // The count carried over the takeover: the standby continued the holder's schedule.
    expect(runs.total_run_count).toBeGreaterThanOrEqual(ids.length - 1);
  } finally {
    a.kill('SIGKILL');
    b.kill('SIGKILL');
    const r = new Redis(REDIS_URL);
    await r.del(storeKey);
    await r.quit();
    await deleteQueues([queue]);
  }
}, 60_000);

test('own wiring: sending to a queue nobody consumes: a warning and the consumers metric at 0', async () => {
  const queue = uniqueName('beatq');
  const store = new FileStore(join(mkdtempSync(join(tmpdir(), 'beat-')), 's.json'));
  await store.save('e', { lastRunAt: 0, totalRunCount: 0 });
  const beat = beatWith([entry(queue, 3600)], store);
  try {
    await beat.start();
    await waitFor(async () => ((await count(queue).catch(() => 0)) >= 1 ? true : undefined));
    const metrics = await beat.metrics.registry.metrics();
    expect(metrics).toContain(`smarter_beat_queue_consumers{queue="${queue}"} 0`);
    expect(metrics).toContain('smarter_beat_lock_held 1');
  } finally {
    await beat.stop();
    await deleteQueues([queue]);
  }
});

test("own wiring: an entry's options reach the message: queue, expires and priority", async () => {
  const queue = uniqueName('beatq');
  const store = new FileStore(join(mkdtempSync(join(tmpdir(), 'beat-')), 's.json'));
  await store.save('e', { lastRunAt: 0, totalRunCount: 0 });
  const e: BeatEntry = { ...entry(queue, 3600), kwargs: { days: 30 }, options: { queue, expires: 600, priority: 5 } };
  const beat = beatWith([e], store);
  try {
    const t0 = Date.now();
    await beat.start();
    await waitFor(async () => ((await count(queue).catch(() => 0)) >= 1 ? true : undefined));
    const msg = await withChannel(async (ch) => ch.get(queue, { noAck: true }));
    expect(msg).not.toBe(false);
    if (msg === false) return;
    const headers = msg.properties.headers as Record<string, unknown>;
    expect(headers.task).toBe('test.add');
    expect(msg.properties.priority).toBe(5);
    const expires = Date.parse(String(headers.expires));
    expect(expires - t0).toBeGreaterThan(590_000);
    expect(expires - t0).toBeLessThan(610_000);
    expect(JSON.parse(msg.content.toString())).toEqual([[2, 3], { days: 30 }, expect.any(Object)]);
  } finally {
    await beat.stop();
    await deleteQueues([queue]);
  }
});
