/** Redis for tests: each test gets its own kombu `global_keyprefix`, and its keys are removed afterwards. */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { KombuKeys } from '../../lib/broker/redis/keys.js';
import type { RedisBroker } from '../../lib/broker/redis/redis-broker.js';
import { KombuRedis } from '../../lib/broker/redis/transport.js';
import { REDIS_URL } from './amqp.js';

export { REDIS_URL };

export interface RedisScope {
  redis: Redis;
  keys: KombuKeys;
  prefix: string;
  /** Another connection to the same server (for BRPOP, which blocks its connection). */
  connect(): Redis;
  close(): Promise<void>;
}

export function redisScope(url = REDIS_URL): RedisScope {
  const prefix = `t:${randomUUID().slice(0, 8)}:`;
  const db = Number(new URL(url).pathname.slice(1) || '0');
  const extra: Redis[] = [];
  const redis = new Redis(url);
  return {
    redis,
    prefix,
    keys: new KombuKeys({ prefix, db }),
    connect() {
      const r = new Redis(url);
      extra.push(r);
      return r;
    },
    async close() {
      const stream = redis.scanStream({ match: `${prefix}*`, count: 500 });
      for await (const batch of stream) if ((batch as string[]).length) await redis.del(...(batch as string[]));
      for (const r of extra) r.disconnect();
      await redis.quit();
    },
  };
}

/**
 * For each test of a file: its own key prefix, handed to `use`, and the RedisBrokers `opened` connects, closed after
 * the test before the prefix's keys are removed (a broker closing restores what it holds, under that prefix).
 */
export function redisBrokersPerTest(use: (s: RedisScope) => void) {
  let s: RedisScope | undefined;
  const brokers: RedisBroker[] = [];
  const closeAll = async () => {
    for (const b of brokers.splice(0)) await b.close();
  };
  beforeEach(() => {
    s = redisScope();
    use(s);
  });
  afterEach(async () => {
    await closeAll();
    await s?.close();
  });
  return {
    async opened(b: RedisBroker): Promise<RedisBroker> {
      brokers.push(b);
      await b.connect();
      return b;
    },
    /** Closes `b` now, in the test, rather than after it. */
    async close(b: RedisBroker): Promise<void> {
      const i = brokers.indexOf(b);
      if (i >= 0) brokers.splice(i, 1);
      await b.close();
    },
    closeAll,
  };
}

/**
 * For the tests of a describe block: a key prefix of their own. After them `stop` runs first (what still works under
 * the prefix, such as a worker process the block started), then the prefix's keys are removed.
 */
export function redisScopeForBlock(stop: () => Promise<void>): { readonly s: RedisScope } {
  let s: RedisScope | undefined;
  beforeAll(() => {
    s = redisScope();
  });
  afterAll(async () => {
    await stop();
    await s?.close();
  });
  return {
    get s() {
      if (!s) throw new Error('redisScopeForBlock: used outside the block');
      return s;
    },
  };
}

/** For each test of a file: its own key prefix and kombu's transport over it, removed after the test. */
export function kombuRedisPerTest(): { readonly s: RedisScope; readonly t: KombuRedis } {
  let current: { s: RedisScope; t: KombuRedis } | undefined;
  beforeEach(() => {
    const s = redisScope();
    current = { s, t: new KombuRedis(s.redis, s.keys) };
  });
  afterEach(async () => current?.s.close());
  const now = () => {
    if (!current) throw new Error('kombuRedisPerTest: used outside a test');
    return current;
  };
  return {
    get s() {
      return now().s;
    },
    get t() {
      return now().t;
    },
  };
}
