/**
 * Celery's `result_extended` (CELERY_RESULT_EXTENDED): our worker stores the task's name, args, kwargs, worker,
 * retries and queue with each state, and Python Celery (Debian's 5.2.6) reads them through `AsyncResult.name`,
 * `.args`, `.kwargs`, `.worker`, `.retries` and `.queue`, as it reads those its own worker stores. Off (Celery's
 * default), nothing of them is stored.
 */
import { REDIS_URL } from '../support/redis.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { pythonJson } from '../support/python-script.js';

type Fields = Record<string, unknown>;

async function pythonReads(h: RedisHarness): Promise<Record<string, Fields>> {
  return (await pythonJson('spec/interop/python/extended_client.py', [REDIS_URL, REDIS_URL, h.queue], {
    env: { ...process.env, ...h.pythonEnv },
  })) as Record<string, Fields>;
}

/** For a describe block: a Redis worker with `env` and, handed to `use`, what Python read of the results it stored. */
function readByPython(env: Record<string, string>, use: (w: { h: RedisHarness; out: Record<string, Fields> }) => void) {
  let h: RedisHarness | undefined;
  beforeAll(async () => {
    h = await startRedisWorker({ env });
    use({ h, out: await pythonReads(h) });
  }, 150_000);
  afterAll(async () => h?.stop());
}

describe('own wiring: result_extended read by Python Celery from the Redis backend', () => {
  let h: RedisHarness;
  let out: Record<string, Fields>;
  readByPython({ CELERY_RESULT_EXTENDED: 'true' }, (w) => ({ h, out } = w));

  test('a success names the task, its positional arguments, the worker, the retries and the queue', () => {
    expect(out.success).toEqual({
      state: 'SUCCESS',
      name: 'test.add',
      args: [2, 3],
      kwargs: {},
      worker: h.worker.nodeName,
      retries: 0,
      queue: h.queue,
    });
  });

  test('keyword arguments are stored as sent', () => {
    expect(out.keyword).toMatchObject({ state: 'SUCCESS', args: [], kwargs: { x: 1, y: 41 }, name: 'test.add' });
  });

  test('a failure carries them too', () => {
    expect(out.failure).toMatchObject({ state: 'FAILURE', name: 'test.fail', args: ['boom'], queue: h.queue });
  });
});

describe('own wiring: without result_extended (the default) no extended field is stored', () => {
  let out: Record<string, Fields>;
  readByPython({}, (w) => ({ out } = w));

  test('Python reads None for each', () => {
    expect(out.success).toEqual({
      state: 'SUCCESS',
      name: null,
      args: null,
      kwargs: null,
      worker: null,
      retries: null,
      queue: null,
    });
  });
});
