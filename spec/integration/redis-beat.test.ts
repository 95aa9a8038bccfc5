/**
 * Beat with a redis:// broker, as smarter-beat runs it (createBroker by URL, the broker's own lease lock):
 * two replicas, one sender at a time, each tick sent through Redis once and run once by our worker on the
 * same Redis; the sender SIGKILLed, the standby takes the lock once its lease (30 s) lapses, and no tick
 * goes out twice.
 */
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { REDIS_URL, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type BeatSend, spawnBeat } from '../support/beat-process.js';
import { redisScope } from '../support/redis.js';
import { startRedisWorker } from '../support/redis-harness.js';

test('own wiring: two Beat replicas on Redis: one sender, each tick run once; SIGKILL the sender and the standby takes over after the lease', async () => {
  const scope = redisScope();
  const h = await startRedisWorker({ scope });
  const storeKey = uniqueName('beat-store');
  const lock = uniqueName('lock');
  const env = {
    BEAT_QUEUE: h.queue,
    BEAT_STORE_KEY: storeKey,
    BEAT_LOCK: lock,
    REDIS_URL,
    BEAT_BROKER_URL: REDIS_URL,
    BEAT_KEY_PREFIX: scope.prefix,
  };
  const sends = new Map<number, Array<{ id: string; at: number }>>();
  const heard = (s: BeatSend, p: ChildProcess) => {
    if (p.pid) sends.set(p.pid, [...(sends.get(p.pid) ?? []), s]);
  };
  const a = spawnBeat(env, heard);
  const b = spawnBeat(env, heard);
  const ran = () => h.worker.processed.get('test.add') ?? 0;
  try {
    await waitFor(() => ([...sends.values()].flat().length >= 4 ? true : undefined), 30_000);
    expect([...sends.keys()]).toHaveLength(1);
    const holder = [...sends.keys()][0] === a.pid ? a : b;
    const standby = holder === a ? b : a;
    // The lock is a key of the broker's Redis, under the workers' prefix, held with a lease.
    expect(await scope.redis.pttl(`${scope.prefix}${lock}`)).toBeGreaterThan(0);
    holder.kill('SIGKILL');
    const killedAt = Date.now();
    await new Promise((r) => holder.once('exit', r));
    await waitFor(() => ((sends.get(standby.pid ?? -1)?.length ?? 0) >= 3 ? true : undefined), 50_000);
    const takeover = sends.get(standby.pid ?? -1)?.[0]?.at ?? 0;
    const ids = [...sends.values()].flat().map((x) => x.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Nobody sent while the dead holder's lease ran out: the standby waited for it.
    expect(takeover - killedAt).toBeGreaterThan(20_000);
    // Every tick announced was sent through Redis and run once by our worker there.
    await waitFor(() => (ran() >= ids.length ? true : undefined), 10_000);
    await new Promise((r) => setTimeout(r, 1500));
    const announced = [...sends.values()].flat().length;
    expect(ran()).toBeGreaterThanOrEqual(ids.length);
    expect(ran()).toBeLessThanOrEqual(announced);
  } finally {
    a.kill('SIGKILL');
    b.kill('SIGKILL');
    await h.stop();
    const r = new Redis(REDIS_URL);
    await r.del(storeKey);
    await r.quit();
    await scope.close();
  }
}, 120_000);
