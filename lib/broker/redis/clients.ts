/**
 * The Redis broker's connections, as kombu's Redis channel has them: one for commands (publish, settle, the
 * scripts), one for the fanout subscriptions, and one per consuming loop for its blocking wait (a wait holds its
 * connection). The command connection's loss and return are logged and told as the broker's `disconnected` and
 * `connected`, in the words the RabbitMQ broker uses, so an outage reads the same on either broker.
 */
import type { EventEmitter } from 'node:events';
import type { Redis, RedisOptions } from 'ioredis';
import { BrokerError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { ioredis } from './ioredis.js';

export class RedisClients {
  readonly cmd: Redis;
  readonly subscriber: Redis;
  /** By ack mode (true: no ack), the connection that consuming loop waits on. */
  readonly blocking = new Map<boolean, Redis>();
  connected = false;
  /** Set by `close`: a close of the command connection is then not a loss. */
  closing = false;
  private lastError: string | undefined;
  /** When the command connection was lost (undefined while connected), for the reconnect's log line. */
  private lostAt: number | undefined;
  /** ioredis reconnect attempts since the loss (`connectFailed` counts the failed ones). */
  private reconnects = 0;
  private failedInARow = 0;

  constructor(
    options: RedisOptions,
    private readonly logger: Logger,
    events: EventEmitter,
  ) {
    const make = (name: string) => {
      // No auto-pipelining: ioredis keeps one auto-pipeline in flight per connection, so a pop queued behind
      // an ack script waited for the ack's reply before it was even sent, and the worker idled between
      // batches. Each command is written as it is made (Redis still runs them in order), and the acks of one
      // turn of the event loop already go in one script (consumer-loop.ts).
      const r = new (ioredis().Redis)({
        ...options,
        lazyConnect: true,
        connectionName: name,
        enableAutoPipelining: false,
      });
      // ioredis rejects a failed connect with "Connection is closed."; the cause (refused, untrusted certificate)
      // comes only as an error event, kept here so that the retry warning can say it. The first since it was
      // last told is kept: the four clients fail together, and a later one (a TLS peer's alert as a handshake is
      // cut short) can hide the cause.
      r.on('error', (err: Error) => void (this.lastError ??= err.message));
      return r;
    };
    this.cmd = make('smarter-worker');
    this.subscriber = make('smarter-worker (fanout)');
    this.blocking.set(false, make('smarter-worker (consume)'));
    this.blocking.set(true, make('smarter-worker (consume, no ack)'));
    this.cmd.on('ready', () => {
      const was = this.connected;
      this.connected = true;
      this.lastError = undefined;
      if (this.lostAt !== undefined) {
        const awayMs = Date.now() - this.lostAt;
        this.lostAt = undefined;
        this.logger.info(`broker connection restored after ${(awayMs / 1000).toFixed(1)} s away`, { away_ms: awayMs });
      }
      if (!was) events.emit('connected');
      this.reconnects = 0;
      this.failedInARow = 0;
    });
    // ioredis retries by itself, at start and after a loss: each attempt means the one before failed, except the
    // first after a loss (the loss is not a failed attempt).
    this.cmd.on('reconnecting', () => {
      if (this.closing || this.connected) return;
      if (this.lostAt !== undefined && this.reconnects++ === 0) return;
      const err = new BrokerError(this.lastError ?? 'redis connection failed');
      events.emit('connectFailed', ++this.failedInARow, err);
    });
    this.cmd.on('close', () => {
      if (!this.connected) return;
      this.connected = false;
      if (this.closing) return;
      this.lostAt = Date.now();
      this.logger.warn('broker connection lost; reconnecting', { error: this.lastError ?? 'connection closed' });
      events.emit('disconnected', new BrokerError('redis connection lost'));
    });
  }

  /** Connects every client not yet connected, and checks the command connection answers. */
  async open(): Promise<void> {
    await Promise.all(
      [this.cmd, this.subscriber, ...this.blocking.values()].map((r) =>
        r.status === 'wait' ? r.connect() : Promise.resolve(),
      ),
    );
    await this.cmd.ping();
  }

  /** The cause of the last connection failure (which ioredis tells only as an error event), then forgotten. */
  takeLastError(fallback: string): string {
    const cause = this.lastError ?? fallback;
    this.lastError = undefined;
    return cause;
  }

  /** Closes the subscriber and command connections (the consuming loops close their own first). */
  async close(): Promise<void> {
    this.connected = false;
    this.subscriber.disconnect();
    // QUIT on a connection that never became ready waits in ioredis's offline queue for ever.
    if (this.cmd.status === 'ready') await this.cmd.quit().catch(() => this.cmd.disconnect());
    else this.cmd.disconnect();
  }
}
