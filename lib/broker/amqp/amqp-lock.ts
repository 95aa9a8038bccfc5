/**
 * A lock held in the broker: an exclusive queue. RabbitMQ lets one connection own it; any other declaration
 * fails with RESOURCE_LOCKED, and the queue disappears with its owner's connection, whether the owner exits,
 * is killed, or stops answering heartbeats. So one holder at a time, and takeover after the holder dies
 * without any expiry to tune. Used by Beat so that two replicas never send the same tick.
 */
import { EventEmitter } from 'node:events';
import type { ChannelModel } from 'amqplib';
import amqp from './amqplib.js';
import type { Logger } from '../../logger.js';
import type { BrokerLock } from '../broker.js';
import { withHeartbeat } from './amqp-broker.js';

export class AmqpLock extends EventEmitter<{ lost: [] }> implements BrokerLock {
  private conn: ChannelModel | null = null;
  private releasing = false;

  constructor(
    private readonly url: string,
    readonly name: string,
    private readonly logger: Logger,
    private readonly heartbeatSeconds = 10,
  ) {
    super();
  }

  get held(): boolean {
    return this.conn !== null;
  }

  /** Takes the lock if nobody holds it; false when another process does. */
  async tryAcquire(): Promise<boolean> {
    if (this.conn) return true;
    const conn = await amqp.connect(withHeartbeat(this.url, this.heartbeatSeconds), { clientProperties: { connection_name: `lock ${this.name}` } });
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
