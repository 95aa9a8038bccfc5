/**
 * The AMQP broker's consumers, all on its one consume channel: started with their own prefetch, started
 * again on every fresh connection, and, when the broker cancels one (its queue was deleted, a quorum queue
 * lost its leader), its queue declared again and consumed again with backoff, as Celery's consumer restarts.
 */
import type { Channel, ChannelModel } from 'amqplib';
import { BrokerError, coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { ConsumeOptions, DeliveryHandler } from '../broker.js';
import type { AckBatcher } from './ack-batcher.js';
import type { AmqpDeclarations } from './amqp-declare.js';
import { type AckMeta, AmqpDelivery, type DeliveryChannels } from './amqp-delivery.js';

interface Consumer {
  handler: DeliveryHandler;
  noAck: boolean;
  prefetch: number | undefined;
  tag?: string | undefined;
  /** Set while the broker has cancelled it (its queue was deleted) and it is being restored. */
  restoring?: { attempt: number; timer?: NodeJS.Timeout | undefined };
}

/** What the consumers ask of their broker's connection, as it is now. */
export interface ConsumerHost extends DeliveryChannels {
  /** The consume channel and its acks; undefined while there is none. */
  channel(): { ch: Channel; acks: AckBatcher<AckMeta> } | undefined;
  model(): ChannelModel | undefined;
  connected(): boolean;
  closing(): boolean;
}

export interface RestoreBackoff {
  initialMs: number;
  maxMs: number;
}

export class AmqpConsumers {
  private readonly consumers = new Map<string, Consumer>();

  constructor(
    private readonly host: ConsumerHost,
    private readonly declared: Pick<AmqpDeclarations, 'restoreQueueOn'>,
    private readonly logger: Logger,
    private readonly backoff: RestoreBackoff,
  ) {}

  /** Every consumer again, on a fresh connection's consume channel (their queues were declared again first). */
  async restoreAll(): Promise<void> {
    for (const [queue, c] of this.consumers) {
      if (c.restoring?.timer) clearTimeout(c.restoring.timer);
      // A queue deleted while we were away is declared again like every other.
      c.tag = await this.start(queue, c);
      c.restoring = undefined;
    }
  }

  private async start(queue: string, c: Consumer): Promise<string> {
    const { handler, noAck } = c;
    const current = this.host.channel();
    if (!current) throw new BrokerError('not connected');
    const { ch, acks } = current;
    // Per-consumer prefetch (global=false), set before each consume: quorum queues refuse a channel-wide
    // limit, and a worker consumes one queue in the ADR-030 deployment, where both mean the same.
    if (c.prefetch !== undefined) await ch.prefetch(c.prefetch, false);
    const reply = await ch.consume(
      queue,
      (msg) => {
        if (msg === null) {
          this.cancelledByBroker(queue, ch);
          return;
        }
        // With noAck the broker has already forgotten the message: nothing to settle, nothing to track.
        if (noAck) {
          const delivery = new AmqpDelivery(this.host, ch, msg, queue);
          delivery.settled = true;
          handler(delivery);
          return;
        }
        const slot = acks.track(msg.fields.deliveryTag, { queue, correlationId: msg.properties.correlationId as string | undefined });
        const delivery = new AmqpDelivery(this.host, ch, msg, queue, { batcher: acks, slot });
        handler(delivery);
      },
      { noAck },
    );
    return reply.consumerTag;
  }

  /**
   * The broker cancelled a consumer (its queue was deleted, or a quorum queue lost its leader): declare
   * the queue again and consume it again with backoff, as Celery's consumer restarts. Until it consumes
   * again, `isConsuming` says so (readiness and `inspect active_queues` read it).
   */
  private cancelledByBroker(queue: string, ch: Channel): void {
    const c = this.consumers.get(queue);
    if (!c || c.restoring || this.host.closing()) return;
    c.tag = undefined;
    c.restoring = { attempt: 0 };
    this.logger.warn(`consumer of ${queue} was cancelled by the broker (was the queue deleted?); declaring it and consuming it again`, { queue });
    this.scheduleRestore(queue, c, ch);
  }

  private scheduleRestore(queue: string, c: Consumer, ch: Channel): void {
    const r = c.restoring;
    if (!r) return;
    const delay = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** r.attempt++);
    r.timer = setTimeout(() => {
      r.timer = undefined;
      // A reconnect restores every consumer itself; a cancel() since means nobody wants it any more.
      const model = this.host.model();
      if (this.host.closing() || this.consumers.get(queue) !== c || this.host.channel()?.ch !== ch || !model) return;
      this.restoreOn(model, queue, c).then(
        () => this.logger.info(`consuming ${queue} again`, { queue }),
        (err: unknown) => {
          this.logger.warn(`could not consume ${queue} again; retrying`, { queue, error: coerceError(err).message });
          this.scheduleRestore(queue, c, ch);
        },
      );
    }, delay);
  }

  private async restoreOn(model: ChannelModel, queue: string, c: Consumer): Promise<void> {
    await this.declared.restoreQueueOn(model, queue);
    c.tag = await this.start(queue, c);
    c.restoring = undefined;
  }

  isConsuming(queue: string): boolean {
    const c = this.consumers.get(queue);
    return this.host.connected() && c !== undefined && c.tag !== undefined && !c.restoring;
  }

  /** Starts consuming `queue` on the connection there is now (the caller waited for one). */
  async consume(queue: string, handler: DeliveryHandler, options: ConsumeOptions = {}): Promise<void> {
    // A consumer without its own prefetch keeps the channel's (the last one set), as amqplib does.
    const entry: Consumer = { handler, noAck: options.noAck ?? false, prefetch: options.prefetch };
    this.consumers.set(queue, entry);
    entry.tag = await this.start(queue, entry);
  }

  async cancel(queue: string): Promise<void> {
    const entry = this.consumers.get(queue);
    this.consumers.delete(queue);
    if (entry?.restoring?.timer) clearTimeout(entry.restoring.timer);
    const ch = this.host.channel()?.ch;
    if (entry?.tag && ch && this.host.connected()) await ch.cancel(entry.tag).catch(() => undefined);
  }
}
