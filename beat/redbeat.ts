/**
 * Smarter's Beat state where RedBeat keeps it (redbeat 2.3.3, `redbeat/schedulers.py`), so that RedBeat and
 * smarter-beat on one Redis are one scheduler: the same lock (`<prefix>:lock`, a token set NX with a timeout,
 * extended to the full timeout on each tick, released on a clean stop), and the same entries (the hash
 * `<prefix><name>` with `definition` and `meta`, its next due second in the sorted set `<prefix>:schedule`,
 * the shipped entries' names in the set `<prefix>:statics`). Either takes over where the other stopped.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import { LuaScript } from '../lib/broker/redis/script.js';
import type { Logger } from '../lib/logger.js';
import { decodeDefinition, decodeMeta, encodeDefinition, encodeMeta } from './redbeat-json.js';
import { type Schedule, nextRun } from '../lib/beat/schedules.js';
import type { BeatEntry } from '../tasks/beat-schedule.js';
import { type EntryState, type EntryStore, type PlannedEntry, LEGACY_REDIS_KEY, legacyState } from './store.js';

export interface RedBeatKeys {
  /** `redbeat_key_prefix`: every key starts with it (default `redbeat:`). */
  prefix: string;
  lock: string;
  schedule: string;
  statics: string;
}

/** RedBeat's key names: `redbeat_lock_key` defaults to `<prefix>:lock`, and is prefixed when it does not start so. */
export function redBeatKeys(prefix = 'redbeat:', lockKey = ''): RedBeatKeys {
  const lock = lockKey === '' ? `${prefix}:lock` : lockKey.startsWith(prefix) ? lockKey : `${prefix}${lockKey}`;
  return { prefix, lock, schedule: `${prefix}:schedule`, statics: `${prefix}:statics` };
}

// RedBeat's extend: to the full timeout (PEXPIRE), not added to what is left, and only for the token's holder.
const EXTEND_TO = new LuaScript(
  `local token = redis.call('get', KEYS[1])
if not token or token ~= ARGV[1] then return 0 end
local left = redis.call('pttl', KEYS[1])
if left < 0 then return 0 end
redis.call('pexpire', KEYS[1], ARGV[2])
return 1`,
  1,
);

// redis-py's release: delete the key only while it still holds our token.
const RELEASE = new LuaScript(
  `if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('del', KEYS[1])
return 1`,
  1,
);

/** RedBeat's lock, as redis-py's `Lock` takes it for RedBeat. */
export class RedBeatLock extends EventEmitter<{ lost: [] }> {
  private token: string | null = null;
  /** Local time after which the key may have expired: we stop counting ourselves the holder then. */
  private validUntil = 0;

  constructor(
    private readonly redis: Redis,
    readonly name: string,
    readonly timeoutMs: number,
    private readonly logger: Logger,
  ) {
    super();
  }

  get held(): boolean {
    return this.token !== null && Date.now() < this.validUntil;
  }

  async tryAcquire(): Promise<boolean> {
    if (this.held) return true;
    const token = randomBytes(16).toString('hex');
    const at = Date.now();
    if ((await this.redis.set(this.name, token, 'PX', this.timeoutMs, 'NX')) !== 'OK') return false;
    this.token = token;
    this.validUntil = at + this.timeoutMs;
    return true;
  }

  /** Extends the lock to its full timeout; false (and `lost`) when another holder has it or it expired. */
  async extend(): Promise<boolean> {
    const token = this.token;
    if (!token) return false;
    const at = Date.now();
    let ok: boolean;
    try {
      ok = Number(await EXTEND_TO.run(this.redis, [this.name], [token, this.timeoutMs])) === 1;
    } catch (err) {
      // Redis unreachable: still the holder until the key would have expired.
      if (this.held) return true;
      this.logger.error(
        `beat: could not extend the lock ${this.name} within its ${this.timeoutMs} ms: ${(err as Error).message}`,
      );
      ok = false;
    }
    if (ok) {
      this.validUntil = at + this.timeoutMs;
      return true;
    }
    if (this.token === token) {
      this.token = null;
      this.logger.error(`beat: lost the lock ${this.name} (it expired, or another scheduler holds it)`);
      this.emit('lost');
    }
    return false;
  }

  async release(): Promise<void> {
    const token = this.token;
    this.token = null;
    if (token) {
      await RELEASE.run(this.redis, [this.name], [token]).catch((err: unknown) =>
        this.logger.warn(`beat: could not release the lock ${this.name}: ${String(err)}`),
      );
    }
  }
}

/** RedBeat's score: the second the entry is next due (now when overdue or never run). */
function score(schedule: Schedule, lastRunAt: number | null, now: number): number {
  const due = lastRunAt === null ? now : Math.max(nextRun(schedule, lastRunAt), now);
  return Math.floor(due / 1000);
}

/** The options RedBeat passes to `apply_async` that smarter-beat's send understands. */
function entryOptions(o: Record<string, unknown>): BeatEntry['options'] {
  return {
    ...(typeof o.queue === 'string' ? { queue: o.queue } : {}),
    ...(typeof o.expires === 'number' ? { expires: o.expires } : {}),
    ...(typeof o.priority === 'number' ? { priority: o.priority } : {}),
  };
}

export class RedBeatStore implements EntryStore {
  /** Keys already reported as unreadable, so a bad entry is logged once, not on every tick. */
  private readonly reported = new Set<string>();

  constructor(
    private readonly redis: Redis,
    readonly keys: RedBeatKeys,
    private readonly logger: Logger,
    /** Where an older smarter-beat kept last runs: an entry RedBeat has no meta for continues from there. */
    private readonly legacyKey: string | null = null,
  ) {}

  get description(): string {
    return `RedBeat's keys ${this.keys.prefix}* (schedule ${this.keys.schedule})`;
  }

  private key(name: string): string {
    return `${this.keys.prefix}${name}`;
  }

  /** RedBeat's `setup_schedule`: drop the shipped entries no longer shipped, (re)write ours, keeping their last runs. */
  async install(statics: BeatEntry[], now: number): Promise<void> {
    const ours = new Set(statics.map((e) => e.name));
    for (const name of await this.redis.smembers(this.keys.statics)) {
      if (ours.has(name)) continue;
      this.logger.info(`beat: removing the old static entry ${name}`);
      await this.redis
        .multi()
        .zrem(this.keys.schedule, this.key(name))
        .del(this.key(name))
        .srem(this.keys.statics, name)
        .exec();
    }
    for (const e of statics) {
      const key = this.key(e.name);
      let last: number | null = now;
      const meta = await this.redis.hget(key, 'meta');
      if (meta) {
        try {
          last = decodeMeta(meta).lastRunAt;
        } catch (err) {
          this.logger.warn(`beat: the meta of ${key} is unreadable (${(err as Error).message}); it starts now`);
          await this.redis.hdel(key, 'meta');
        }
      }
      const old = meta || !this.legacyKey ? null : await legacyState(this.redis, this.legacyKey, e.name);
      if (old) last = old.lastRunAt;
      const definition = encodeDefinition({ ...e, options: { ...e.options }, enabled: true });
      await this.redis
        .multi()
        .hset(key, 'definition', definition)
        .hsetnx(key, 'meta', encodeMeta(old ?? { lastRunAt: now }))
        .zadd(this.keys.schedule, score(e.schedule, last, now), key)
        .exec();
    }
    if (statics.length > 0) await this.redis.sadd(this.keys.statics, ...statics.map((e) => e.name));
  }

  /** Every entry of RedBeat's schedule (ours and those saved at run time), as stored now. */
  async plan(): Promise<PlannedEntry[]> {
    // Negative scores mean "never again" to RedBeat, which skips them.
    const keys = await this.redis.zrangebyscore(this.keys.schedule, 0, '+inf');
    if (keys.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const k of keys) pipe.hmget(k, 'definition', 'meta');
    const rows = (await pipe.exec()) ?? [];
    const out: PlannedEntry[] = [];
    for (const [i, key] of keys.entries()) {
      const [err, value] = rows[i] ?? [null, null];
      if (err) throw err;
      const [definition, meta] = (value as [string | null, string | null] | null) ?? [null, null];
      if (!definition) {
        // RedBeat drops a schedule member whose hash is gone (a deleted entry).
        this.logger.warn(`beat: ${key} is in ${this.keys.schedule} without a definition; removing it`);
        await this.redis.zrem(this.keys.schedule, key);
        continue;
      }
      try {
        const d = decodeDefinition(definition);
        const m = decodeMeta(meta);
        const entry: BeatEntry = {
          name: d.name,
          task: d.task,
          schedule: d.schedule,
          args: d.args,
          kwargs: d.kwargs,
          options: entryOptions(d.options),
        };
        out.push({
          entry,
          enabled: d.enabled,
          state: m.lastRunAt === null ? null : { lastRunAt: m.lastRunAt, totalRunCount: m.totalRunCount },
        });
        this.reported.delete(key);
      } catch (err) {
        if (!this.reported.has(key)) this.logger.error(`beat: skipping ${key}: ${(err as Error).message}`);
        this.reported.add(key);
      }
    }
    return out;
  }

  /** RedBeat's `_next_instance`: the meta with the run, and the next due second. */
  async ran(entry: BeatEntry, state: EntryState): Promise<void> {
    const key = this.key(entry.name);
    await this.redis
      .multi()
      .hset(key, 'meta', encodeMeta(state))
      .zadd(this.keys.schedule, score(entry.schedule, state.lastRunAt, state.lastRunAt), key)
      .exec();
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}

/** RedBeat's lock timeout: `redbeat_lock_timeout`, else five times the loop interval (`max_interval * 5`). */
export function lockTimeoutMs(lockTimeoutSeconds: number | null, maxLoopIntervalSeconds: number): number {
  return Math.round((lockTimeoutSeconds ?? 5 * maxLoopIntervalSeconds) * 1000);
}

export interface RedBeatOptions {
  url: string;
  keyPrefix?: string;
  lockKey?: string;
  lockTimeoutMs: number;
  logger: Logger;
  /** The hash an older smarter-beat kept its last runs in (default `smarter-beat:schedule`; null: none). */
  legacyKey?: string | null;
}

/** The store and the lock on one connection (the store closes it, after Beat released the lock). */
export function redBeat(o: RedBeatOptions): { store: RedBeatStore; lock: RedBeatLock } {
  const redis = new Redis(o.url, { maxRetriesPerRequest: 3 });
  const keys = redBeatKeys(o.keyPrefix, o.lockKey);
  return {
    store: new RedBeatStore(redis, keys, o.logger, o.legacyKey === undefined ? LEGACY_REDIS_KEY : o.legacyKey),
    lock: new RedBeatLock(redis, keys.lock, o.lockTimeoutMs, o.logger),
  };
}
