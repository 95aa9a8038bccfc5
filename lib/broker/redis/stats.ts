/**
 * What the Redis broker tells of its own bookkeeping without consuming it: the unacked messages past the
 * visibility timeout and the delayed set (`doctor`), and the delayed set in buckets like RabbitMQ's delay levels
 * (`smarter_worker_delayed_messages`), so both brokers read alike.
 */
import type { Redis } from 'ioredis';
import type { BrokerBacklog, DelayLevelStats } from '../broker.js';
import type { KombuKeys } from './keys.js';

/** Buckets of `delayedStats`, as many as RabbitMQ's delay levels so both read alike. */
const STAT_LEVELS = 28;

export async function backlog(cmd: Redis, keys: KombuKeys, visibilityTimeoutSeconds: number): Promise<BrokerBacklog> {
  const now = Date.now();
  // kombu scores unacked_index with time.time() (seconds); the delayed set is scored in ms.
  const [overdue, oldest, delayed, earliest] = await Promise.all([
    cmd.zcount(keys.unackedIndex, '-inf', now / 1000 - visibilityTimeoutSeconds),
    cmd.zrange(keys.unackedIndex, 0, 0, 'WITHSCORES'),
    cmd.zcard(keys.delayed),
    cmd.zrange(keys.delayed, 0, 0, 'WITHSCORES'),
  ]);
  return {
    visibilityTimeoutSeconds,
    unackedOverdue: overdue,
    oldestUnackedAgeMs: oldest[1] === undefined ? null : Math.max(0, now - Number(oldest[1]) * 1000),
    delayed,
    earliestDueAt: earliest[1] === undefined ? null : Number(earliest[1]),
  };
}

/** The delayed set in buckets like RabbitMQ's delay levels: bucket L holds what is due within 2^(L+1) − 1 s. */
export async function delayedStats(cmd: Redis, keys: KombuKeys): Promise<DelayLevelStats[]> {
  const now = Date.now();
  const p = cmd.pipeline();
  for (let level = 0; level < STAT_LEVELS; level++) {
    const lo = level === 0 ? '-inf' : `(${now + (2 ** level - 1) * 1000}`;
    p.zcount(keys.delayed, lo, level === STAT_LEVELS - 1 ? '+inf' : now + (2 ** (level + 1) - 1) * 1000);
  }
  const res = (await p.exec()) ?? [];
  return res.map(([, n], level) => ({
    level,
    queue: keys.delayed,
    messages: Number(n ?? 0),
    dueWithinSeconds: 2 ** (level + 1) - 1,
  }));
}
