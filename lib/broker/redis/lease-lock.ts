/**
 * A lock with a lease in Redis, as RedBeat holds its lock: `SET key token NX PX ttl`, renewed by its holder
 * (a script that checks the token) every third of the lease, released only by its holder. A standby takes
 * it once the lease lapses, after the holder died or lost Redis. The holder gives it up as lost when it
 * could not renew within the lease: by then a standby may hold it, so it must stop sending.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { Logger } from '../../logger.js';
import { LEASE_RENEW, RELEASE_IF_HELD } from './scripts.js';

export class RedisLeaseLock extends EventEmitter<{ lost: [] }> {
  private token: string | null = null;
  private timer: NodeJS.Timeout | undefined;
  private renewedAt = 0;

  private redis: Redis | null;

  /** `redis`: a shared connection, or a factory of the lock's own (opened on acquire, closed on release). */
  constructor(
    private readonly connection: Redis | (() => Redis),
    readonly name: string,
    private readonly logger: Logger,
    readonly leaseMs = 30_000,
  ) {
    super();
    this.redis = typeof connection === 'function' ? null : connection;
  }

  private client(): Redis {
    if (!this.redis) this.redis = typeof this.connection === 'function' ? this.connection() : this.connection;
    return this.redis;
  }

  private get ownConnection(): boolean {
    return typeof this.connection === 'function';
  }

  get held(): boolean {
    return this.token !== null;
  }

  /** Takes the lock if nobody holds it (or its lease lapsed); false when another process holds it. */
  async tryAcquire(): Promise<boolean> {
    if (this.token) return true;
    const token = randomUUID();
    const ok = await this.client().set(this.name, token, 'PX', this.leaseMs, 'NX');
    if (ok !== 'OK') return false;
    this.token = token;
    this.renewedAt = Date.now();
    this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
    return true;
  }

  private async renew(): Promise<void> {
    const token = this.token;
    if (!token) return;
    let still = false;
    try {
      still = Number(await LEASE_RENEW.run(this.client(), [this.name], [token, this.leaseMs])) === 1;
      if (still) this.renewedAt = Date.now();
    } catch (err) {
      // Redis unreachable: we still hold the lease until it would have lapsed.
      still = Date.now() - this.renewedAt < this.leaseMs;
      if (!still) {
        this.logger.error(
          `could not renew the lock ${this.name} within its ${this.leaseMs} ms lease: ${(err as Error).message}`,
        );
      }
    }
    if (!still && this.token === token) {
      this.stop();
      this.logger.error(`lost the lock ${this.name} (its lease lapsed or another holder took it)`);
      this.emit('lost');
    }
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.token = null;
  }

  async release(): Promise<void> {
    const token = this.token;
    this.stop();
    const redis = this.redis;
    if (token && redis) await RELEASE_IF_HELD.run(redis, [this.name], [token]).catch(() => undefined);
    if (this.ownConnection && redis) {
      this.redis = null;
      await redis.quit().catch(() => redis.disconnect());
    }
  }
}
