/**
 * Celery's redis result backend: `celery-task-meta-<id>` written with SETEX (result_expires) and PUBLISHed
 * on a channel of the same name, which is what `AsyncResult.get()` waits on. A stored SUCCESS is never
 * overwritten (Celery's guard against a redelivered duplicate).
 */
import { Redis } from 'ioredis';
import { BackendError } from '../errors.js';
import { parseKombuJson, stringifyKombuJson } from '../protocol/json.js';
import type { ResultBackend } from './backend.js';
import { kvMeta, type StoredResult } from './meta.js';

export const META_PREFIX = 'celery-task-meta-';

export class RedisBackend implements ResultBackend {
  readonly kind = 'redis';
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly expiresSeconds: number | null,
  ) {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 20 });
    this.redis.on('error', () => undefined);
  }

  async store(result: StoredResult): Promise<void> {
    const key = META_PREFIX + result.taskId;
    try {
      const existing = await this.redis.get(key);
      if (existing !== null && existing.includes('"SUCCESS"')) {
        const parsed = parseKombuJson(existing) as { status?: unknown };
        if (parsed.status === 'SUCCESS') return;
      }
      const value = stringifyKombuJson(kvMeta(result));
      const tx = this.redis.multi();
      if (this.expiresSeconds) tx.setex(key, this.expiresSeconds, value);
      else tx.set(key, value);
      tx.publish(key, value);
      await tx.exec();
    } catch (err) {
      throw new BackendError(`cannot store the result of ${result.taskId} in redis`, { cause: err });
    }
  }

  async get(taskId: string): Promise<Record<string, unknown> | null> {
    const v = await this.redis.get(META_PREFIX + taskId);
    return v === null ? null : (parseKombuJson(v) as Record<string, unknown>);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
