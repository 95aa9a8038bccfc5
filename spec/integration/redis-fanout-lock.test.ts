/**
 * kombu's fanout over Redis pub/sub (pidbox broadcasts, events) both ways with kombu itself, and the Beat
 * lease lock: one holder, renewed while held, taken over by a standby once the holder stops renewing.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { RedisFanout } from '../../lib/broker/redis/fanout.js';
import type { Envelope } from '../../lib/broker/redis/envelope.js';
import { RedisLeaseLock } from '../../lib/broker/redis/lease-lock.js';
import { nullLogger } from '../../lib/logger.js';
import { REDIS_URL, type RedisScope, redisScope } from '../support/redis.js';
import { PYTHON } from '../support/python-worker.js';

const run = promisify(execFile);
const json = (o: unknown) => ({
  body: Buffer.from(JSON.stringify(o)),
  properties: {
    contentType: 'application/json',
    contentEncoding: 'utf-8',
    headers: { hostname: 'ours' },
    deliveryMode: 2 as const,
    priority: 0,
  },
});

let s: RedisScope;
beforeEach(() => {
  s = redisScope();
});
afterEach(async () => s.close());

describe("fanout over pub/sub with kombu's channel names", () => {
  test('a kombu fanout consumer receives our broadcast (pidbox style, no routing key)', async () => {
    const fan = new RedisFanout(s.redis, s.connect(), s.keys);
    const py = spawn(PYTHON, ['spec/interop/python/kombu_redis.py', REDIS_URL, s.prefix, 'listen', 'test.pidbox'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    py.stdout.on('data', (d: Buffer) => (out += d.toString()));
    while (!out.includes('ready')) await once(py.stdout, 'data');
    // kombu subscribes right after "ready"; publish until a subscriber has it.
    for (
      let i = 0;
      i < 50 && (await fan.publish('test.pidbox', '', json({ method: 'ping' }).body, json({}).properties)) === 0;
      i++
    ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await once(py, 'exit');
    const got = JSON.parse(out.trim().split('\n').pop() ?? 'null') as { body: unknown; headers: unknown };
    expect(got.body).toEqual({ method: 'ping' });
    expect(got.headers).toEqual({ hostname: 'ours' });
  }, 60_000);

  test('we receive a kombu broadcast, and events by routing-key pattern (# as glob *)', async () => {
    const fan = new RedisFanout(s.redis, s.connect(), s.keys);
    const pidbox: Envelope[] = [];
    const events: Envelope[] = [];
    await fan.subscribe('test.pidbox', '', (e) => e && pidbox.push(e));
    await fan.subscribe('testev', 'task.#', (e) => e && events.push(e));
    // kombu's broadcast to an exchange, with a routing key for a topic one.
    const broadcast = (...to: string[]) =>
      run(PYTHON, ['spec/interop/python/kombu_redis.py', REDIS_URL, s.prefix, 'broadcast', ...to]);
    await broadcast('test.pidbox');
    await broadcast('testev', 'task.succeeded');
    await broadcast('testev', 'worker.heartbeat');
    for (let i = 0; i < 50 && (pidbox.length < 1 || events.length < 1); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(pidbox).toHaveLength(1);
    expect(JSON.parse(pidbox[0]?.raw.body.toString() ?? '')).toEqual({ method: 'ping' });
    expect(events.map((e) => e.routingKey)).toEqual(['task.succeeded']);
  }, 60_000);
});

describe('the Beat lease lock', () => {
  test('one holder at a time; the holder keeps it past its lease by renewing; release frees it', async () => {
    // A lease of 1.5 s, renewed every 500 ms, waited through twice: with 300 ms, this process's timers held up
    // for 200 ms on a loaded machine would let it lapse.
    const a = new RedisLeaseLock(s.redis, `${s.prefix}beat.lock`, nullLogger(), 1500);
    const b = new RedisLeaseLock(s.connect(), `${s.prefix}beat.lock`, nullLogger(), 1500);
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    await new Promise((r) => setTimeout(r, 3000));
    expect(a.held).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    await a.release();
    expect(await b.tryAcquire()).toBe(true);
    await b.release();
  });

  test('a standby takes over once the holder stops renewing, and the old holder learns it lost the lock', async () => {
    const holderConn = s.connect();
    const a = new RedisLeaseLock(holderConn, `${s.prefix}beat.lock`, nullLogger(), 300);
    const b = new RedisLeaseLock(s.redis, `${s.prefix}beat.lock`, nullLogger(), 300);
    expect(await a.tryAcquire()).toBe(true);
    const lost = once(a, 'lost');
    // The holder freezes (no renewals reach Redis): simulate by taking its lease from under it once it lapses.
    holderConn.disconnect();
    let took = false;
    for (let i = 0; i < 40 && !took; i++) {
      await new Promise((r) => setTimeout(r, 50));
      took = await b.tryAcquire();
    }
    expect(took).toBe(true);
    await lost;
    expect(a.held).toBe(false);
    await b.release();
  });
});
