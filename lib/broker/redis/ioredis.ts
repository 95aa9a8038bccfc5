/**
 * ioredis, loaded on first use: its ~60 modules cost ~30 ms of a start-up, and only a worker with a
 * redis:// broker or result backend opens a connection.
 */
import { createRequire } from 'node:module';
import type * as IoRedisModule from 'ioredis';

type IoRedis = typeof IoRedisModule;

let loaded: IoRedis | undefined;

export function ioredis(): IoRedis {
  return (loaded ??= createRequire(import.meta.url)('ioredis') as IoRedis);
}
