/**
 * Python Celery (Debian's 5.2.6) with a `redis://` broker, as Smarter deploys it, sends to our worker on the
 * same Redis: protocol 1 (Smarter's) and 2, results in Redis read by AsyncResult.get(), NotRegistered,
 * expired, countdown, retries, a chain; the same cases the RabbitMQ interop suite checks.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REDIS_URL } from '../support/redis.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { PYTHON } from '../support/python-worker.js';

const run = promisify(execFile);

type Outcome = { ok?: unknown; raised?: string; module?: string; args?: string[]; state: string };

describe.each([1, 2] as const)(
  'own wiring: Python Celery → our worker, both on a Redis broker, protocol %s',
  (protocol) => {
    let h: RedisHarness;
    let out: Record<string, Outcome & number>;
    beforeAll(async () => {
      h = await startRedisWorker();
      const { stdout } = await run(
        PYTHON,
        ['spec/interop/python/client.py', REDIS_URL, REDIS_URL, String(protocol), h.queue],
        {
          timeout: 120_000,
          env: { ...process.env, ...h.pythonEnv },
        },
      );
      out = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, Outcome & number>;
    }, 150_000);
    afterAll(async () => h.stop());

    test('positional and keyword arguments give the sum', () => {
      expect(out.positional).toEqual({ ok: 5, state: 'SUCCESS' });
      expect(out.keyword).toEqual({ ok: 42, state: 'SUCCESS' });
    });

    test('a countdown delays the run by at least its length', () => {
      expect(out.countdown).toEqual({ ok: 2, state: 'SUCCESS' });
      expect(out.countdown_elapsed).toBeGreaterThanOrEqual(2);
    });

    test('expires in the past: REVOKED', () => {
      expect(out.expired).toMatchObject({ raised: 'TaskRevokedError', state: 'REVOKED' });
    });

    test('an unknown task name: NotRegistered', () => {
      expect(out.unknown).toMatchObject({ raised: 'NotRegistered', args: ['test.nope'], state: 'FAILURE' });
    });

    test('a failing task: ValueError with its message', () => {
      expect(out.failing).toMatchObject({ raised: 'ValueError', args: ['boom'], state: 'FAILURE' });
    });

    test('a task that retries twice (our worker republishing into Redis) then succeeds', () => {
      expect(out.retry).toEqual({ ok: 'done after 2 retries', state: 'SUCCESS' });
    });

    test('a chain built in Python runs its second step with the first result', () => {
      expect(out.chain).toEqual({ ok: 12, state: 'SUCCESS' });
    });

    test('nothing is left unacked, waiting or unroutable', async () => {
      const { redis, keys } = h.scope;
      expect(await redis.hlen(keys.unacked)).toBe(0);
      expect(await redis.zcard(keys.delayed)).toBe(0);
      expect(await redis.llen(keys.unroutable)).toBe(0);
    });
  },
);
