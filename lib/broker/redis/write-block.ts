/**
 * A Redis at maxmemory (with the default `noeviction` policy) answers every write that could grow it with
 * `OOM command not allowed`, and refuses it before doing anything: a refused write is safe to send again, and it
 * is never a partial one (a script is refused at its first such write, and never after one). The broker is then
 * blocked, as RabbitMQ blocks a connection under a resource alarm: told once at block and once at unblock, read
 * by the worker as `Broker.blocked` (the `smarter_worker_broker_blocked` gauge, the probes' bodies), and every
 * write refused meanwhile is held and sent again once Redis takes writes, never dropped.
 */
import { BrokerError, coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { BrokerBlock } from '../broker.js';

/** Backoff of the probe while blocked: from this, doubling, up to MAX_PROBE_MS. */
const FIRST_PROBE_MS = 200;
const MAX_PROBE_MS = 5000;

export function isOomRefusal(err: unknown): boolean {
  return /(^|\W)OOM command not allowed/.test(coerceError(err).message);
}

export class WriteBlock {
  private block: BrokerBlock | undefined;
  /** Writes (and the probe) waiting for the block to end, or for the broker to close. */
  private readonly waiters = new Set<() => void>();
  private probing = false;

  /**
   * @param probe a write that Redis refuses when it refuses writes and that writes nothing when it does not
   *   (`SET … XX` on a key that does not exist)
   */
  constructor(
    private readonly logger: Logger,
    private readonly probe: () => Promise<unknown>,
    private readonly closing: () => boolean,
  ) {}

  get blocked(): BrokerBlock | undefined {
    return this.block;
  }

  /**
   * Runs `write`; refused for maxmemory, it waits for Redis to take writes again and is sent again, for as long
   * as it takes. Fails with the write's own error on any other, and with a BrokerError when the broker closes
   * while it waits (it was not written: the caller still has it to keep).
   */
  async write<T>(write: () => Promise<T>): Promise<T> {
    for (;;) {
      // While blocked, what would be refused waits for the probe instead of adding to the refusals.
      if (this.block) await this.unblocked();
      try {
        return await write();
      } catch (err) {
        if (!isOomRefusal(err)) throw err;
        this.refused(coerceError(err).message);
      }
    }
  }

  /** Resolves once Redis takes writes; meanwhile the broker is blocked. For the start: a Redis at maxmemory is waited for. */
  async waitForWrites(): Promise<void> {
    await this.write(this.probe);
  }

  /** The broker closes: what waits is woken, and fails. */
  stop(): void {
    for (const w of this.waiters) w();
    this.waiters.clear();
  }

  private refused(reason: string): void {
    if (!this.block) {
      this.block = { reason, since: Date.now() };
      this.logger.warn(`broker blocked publishing (${reason}): publishes wait for Redis to take writes`, { reason });
    }
    if (!this.probing) void this.probeUntilTaken();
  }

  private async unblocked(): Promise<void> {
    if (this.closing()) throw new BrokerError('broker closed while Redis refused writes');
    await new Promise<void>((resolve) => this.waiters.add(resolve));
    if (this.closing()) throw new BrokerError('broker closed while Redis refused writes');
  }

  /** One probe for every write held: with backoff until Redis takes it, then the block ends and the writes go. */
  private async probeUntilTaken(): Promise<void> {
    this.probing = true;
    try {
      for (let attempt = 0; this.block && !this.closing(); attempt++) {
        await this.pause(Math.min(MAX_PROBE_MS, FIRST_PROBE_MS * 2 ** Math.min(attempt, 10)));
        if (this.closing()) return;
        try {
          await this.probe();
        } catch {
          // Still refused, or the connection is away (it reconnects by itself): probed again later.
          continue;
        }
        const block = this.block;
        this.block = undefined;
        const ms = Date.now() - block.since;
        this.logger.info(`broker unblocked after ${(ms / 1000).toFixed(1)} s blocked (${block.reason})`, {
          blocked_ms: ms,
        });
      }
    } finally {
      this.probing = false;
      this.stop();
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.waiters.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }
}
