/**
 * Celery's redis result backend: `celery-task-meta-<id>` written with SETEX (result_expires) and PUBLISHed
 * on a channel of the same name, which is what `AsyncResult.get()` waits on. A stored SUCCESS is never
 * overwritten (Celery's guard against a redelivered duplicate), nor a final state by a non-final one.
 */
import type { Redis } from 'ioredis';
import { ioredis } from '../broker/redis/ioredis.js';
import { type TlsSettings, describeTlsFailure, redisTls, tlsConnectOptions } from '../config/tls.js';
import { BackendError, coerceError } from '../errors.js';
import { parseKombuJson, stringifyKombuJson } from '../protocol/json.js';
import type { ResultBackend } from './backend.js';
import { READY_STATES, type StoredResult, kvMeta } from './meta.js';

export const META_PREFIX = 'celery-task-meta-';

/**
 * Check and write in one atomic step (a Lua script), so that concurrent stores of one task cannot interleave.
 * Celery never overwrites SUCCESS; we also never let a non-final state (RETRY, STARTED) replace a final one
 * (FAILURE, REVOKED): a retry with countdown 0 can fail for good before the run that sent it has stored its
 * RETRY, and that stale RETRY would hide the outcome. ARGV: value, expiry seconds (0 = none), 1 if final.
 */
const STORE_SCRIPT = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local st = string.match(cur, '"status":%s*"(%u+)"')
  if st == 'SUCCESS' then return 0 end
  if (st == 'FAILURE' or st == 'REVOKED') and ARGV[3] == '0' then return 0 end
end
if tonumber(ARGV[2]) > 0 then redis.call('SETEX', KEYS[1], ARGV[2], ARGV[1]) else redis.call('SET', KEYS[1], ARGV[1]) end
redis.call('PUBLISH', KEYS[1], ARGV[1])
return 1`;

/** How many times a result is tried against a Redis that is down (see the constructor). */
export const STORE_TRIES = 60;

/** The wait before try `n` + 1 (ioredis' reconnect delays as set below: about 80 s over STORE_TRIES tries). */
const storeDelayMs = (n: number): number => Math.min(n * 50, 2000);

/** Redis at maxmemory refuses writes with an OOM reply: it frees memory by itself (expiries, evictions) or is fixed. */
function isOutOfMemory(err: unknown): boolean {
  return /(^|\W)OOM command not allowed/.test(coerceError(err).message);
}

export interface RedisBackendOptions {
  /** The wait before each further try of a store refused for memory (tests shorten it). */
  oomDelayMs?: (tries: number) => number;
}

export class RedisBackend implements ResultBackend {
  readonly kind = 'redis';
  private readonly redis: Redis;
  /** The last connection error, for a store that failed: a TLS refusal says what to fix. */
  private lastError: unknown;

  constructor(
    url: string,
    private readonly expiresSeconds: number | null,
    tlsSetting?: TlsSettings,
    private readonly options: RedisBackendOptions = {},
  ) {
    // rediss:// and Celery's redis_backend_use_ssl: the server's certificate is verified unless told not to.
    const { url: plain, tls } = redisTls(url, tlsSetting);
    // A result waits for Redis through a restart rather than being dropped: 60 tries at ioredis' reconnect delays
    // (50 ms more each time, at most 2 s) are about 80 s, against the ~10 s of 20 tries (the fault suite lost
    // the results of the runs waiting through a 15 s outage with 20).
    // A certificate that is not trusted stays untrusted: that is not waited out, every store fails at once, saying why.
    this.redis = new (ioredis().Redis)(plain, {
      lazyConnect: false,
      maxRetriesPerRequest: STORE_TRIES,
      retryStrategy: (times) =>
        describeTlsFailure(this.lastError, 'CELERY_REDIS_BACKEND_USE_SSL') !== undefined ? null : storeDelayMs(times),
      ...(tls ? { tls: tlsConnectOptions(tls) } : {}),
    });
    this.redis.on('error', (err: unknown) => {
      this.lastError = err;
    });
  }

  private why(err: unknown): string {
    const tls = describeTlsFailure(this.lastError, 'CELERY_REDIS_BACKEND_USE_SSL');
    return tls ?? coerceError(err).message;
  }

  async store(result: StoredResult): Promise<void> {
    const key = META_PREFIX + result.taskId;
    const value = stringifyKombuJson(kvMeta(result));
    // A Redis at maxmemory is waited for as one that is down (the same tries and delays), not dropped at once.
    for (let tries = 1; ; tries++) {
      try {
        await this.redis.eval(
          STORE_SCRIPT,
          1,
          key,
          value,
          String(this.expiresSeconds ?? 0),
          READY_STATES.has(result.state) ? '1' : '0',
        );
        return;
      } catch (err) {
        if (isOutOfMemory(err) && tries < STORE_TRIES) {
          await new Promise((r) => setTimeout(r, (this.options.oomDelayMs ?? storeDelayMs)(tries)));
          continue;
        }
        const why = isOutOfMemory(err) ? `refused for memory ${tries} times: ${this.why(err)}` : this.why(err);
        throw new BackendError(`cannot store the result of ${result.taskId} in redis: ${why}`, { cause: err });
      }
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
