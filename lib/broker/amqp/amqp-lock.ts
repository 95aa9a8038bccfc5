/**
 * A lock held in the broker: an exclusive queue. RabbitMQ lets one connection own it; any other declaration
 * fails with RESOURCE_LOCKED, and the queue disappears with its owner's connection, whether the owner exits,
 * is killed, or stops answering heartbeats. So one holder at a time, and takeover after the holder dies
 * without any expiry to tune. Used by Beat so that two replicas never send the same tick.
 */
import { EventEmitter } from 'node:events';
import type { ChannelModel } from 'amqplib';
import type { TlsSettings } from '../../config/tls.js';
import type { Logger } from '../../logger.js';
import type { BrokerLock } from '../broker.js';
import { FailoverList, connectTo } from './amqp-connect.js';

export class AmqpLock extends EventEmitter<{ lost: [] }> implements BrokerLock {
  private conn: ChannelModel | null = null;
  private releasing = false;
  private readonly failover: FailoverList;

  constructor(
    url: string,
    readonly name: string,
    private readonly logger: Logger,
    private readonly heartbeatSeconds = 10,
    private readonly connect: { tls?: TlsSettings | undefined; connectTimeoutMs?: number | undefined } = {},
  ) {
    super();
    this.failover = new FailoverList(url);
  }

  /**
   * The lock's own connection, on the first node of the failover list that answers (from the one that
   * answered last). In a cluster an exclusive queue is the cluster's, so any node gives the same answer.
   */
  private async open(): Promise<ChannelModel> {
    const o = { heartbeatSeconds: this.heartbeatSeconds, connectionName: `lock ${this.name}`, ...this.connect };
    let last: unknown;
    for (let i = 0; i < this.failover.urls.length; i++) {
      try {
        const conn = await connectTo(this.failover.current, o);
        this.failover.succeeded();
        return conn;
      } catch (err) {
        last = err;
        this.failover.failed();
      }
    }
    throw last;
  }

  get held(): boolean {
    return this.conn !== null;
  }

  /** Takes the lock if nobody holds it; false when another process does. */
  async tryAcquire(): Promise<boolean> {
    if (this.conn) return true;
    const conn = await this.open();
    conn.on('error', () => undefined);
    try {
      const ch = await conn.createChannel();
      ch.on('error', () => undefined);
      await ch.assertQueue(this.name, { exclusive: true, durable: false, autoDelete: false });
    } catch (err) {
      await conn.close().catch(() => undefined);
      if (/RESOURCE_LOCKED|405/.test(String(err))) return false;
      throw err;
    }
    this.conn = conn;
    this.releasing = false;
    conn.on('close', () => {
      this.conn = null;
      if (!this.releasing) {
        this.logger.error(`lost the lock ${this.name} (broker connection closed)`);
        this.emit('lost');
      }
    });
    return true;
  }

  async release(): Promise<void> {
    this.releasing = true;
    const conn = this.conn;
    this.conn = null;
    await conn?.close().catch(() => undefined);
  }
}
