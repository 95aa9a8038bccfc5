/**
 * A delivery of the AMQP broker: its message as the worker reads it (built once), settled at most once, on
 * the consume channel's ack batcher or, for a scratch channel's (`take`), on that channel directly. A
 * settle whose channel is gone is counted and logged by the broker: the broker redelivers that message.
 */
import type { Channel, ConsumeMessage, GetMessage } from 'amqplib';
import { BrokerError } from '../../errors.js';
import type { Delivery } from '../broker.js';
import type { AckBatcher, AckSlot } from './ack-batcher.js';

/** What a delivery asks of its broker: whether its channel lives, and to hear of a settle that could not go out. */
export interface DeliveryChannels {
  isLive(channel: Channel): boolean;
  staleSettle(queue: string, what: string, correlationId: string | undefined): void;
}

/** What a stale ack reports: the delivery it was for. */
export interface AckMeta {
  queue: string;
  correlationId: string | undefined;
}

/** The consume channel's acks (ack-batcher.ts); a delivery of a scratch channel (`take`) has none. */
export interface Batched {
  batcher: AckBatcher<AckMeta>;
  slot: AckSlot<AckMeta>;
  /** Told once when it is settled (or given up on): its bytes are no longer held (held-window.ts). */
  released?: () => void;
  /** Told when it is acked on a live channel (copies.ts: a redelivery of it is not run again). */
  onAck?: () => void;
}

type RawProperties = Delivery['raw']['properties'];

/** The properties a delivery shows the worker (clusterId, which Celery never sets, left out). */
const RAW_PROPERTIES = [
  'contentType',
  'contentEncoding',
  'correlationId',
  'replyTo',
  'priority',
  'deliveryMode',
  'expiration',
  'messageId',
  'timestamp',
  'type',
  'appId',
  'userId',
  'headers',
] as const satisfies ReadonlyArray<keyof RawProperties>;

function copyProperty<K extends keyof RawProperties>(to: RawProperties, from: RawProperties, k: K): void {
  to[k] = from[k];
}

export class AmqpDelivery implements Delivery {
  settled = false;
  constructor(
    private readonly broker: DeliveryChannels,
    private readonly channel: Channel,
    private readonly msg: ConsumeMessage | GetMessage,
    readonly queue: string,
    private readonly batched?: Batched,
  ) {}
  private rawView: Delivery['raw'] | undefined;
  /** Built once: the worker reads it to decode, to log and to settle. */
  get raw(): Delivery['raw'] {
    return (this.rawView ??= this.view());
  }
  private view(): Delivery['raw'] {
    // amqplib types every property `any`: read here as what AMQP carries.
    const p: RawProperties = this.msg.properties;
    const properties: RawProperties = {};
    for (const k of RAW_PROPERTIES) copyProperty(properties, p, k);
    return { body: this.msg.content, properties };
  }
  get exchange() {
    return this.msg.fields.exchange;
  }
  get routingKey() {
    return this.msg.fields.routingKey;
  }
  get redelivered() {
    return this.msg.fields.redelivered;
  }
  get live(): boolean {
    return this.broker.isLive(this.channel);
  }
  ack(): void {
    const b = this.batched;
    this.settle('ack', () => {
      if (b) {
        if (!b.batcher.ack(b.slot)) throw new BrokerError('channel closed');
        // Sent on a live channel: handled here, whether or not the ack reaches the broker.
        b.onAck?.();
      } else this.channel.ack(this.msg);
    });
  }
  reject(requeue: boolean): void {
    this.settle(requeue ? 'requeue' : 'reject', () => {
      try {
        this.channel.reject(this.msg, requeue);
      } finally {
        this.batched?.batcher.release(this.batched.slot);
      }
    });
  }
  private settle(what: string, fn: () => void): void {
    if (this.settled) return;
    this.settled = true;
    this.batched?.released?.();
    // Whether the channel lives is the only question: a settle right after a reconnect, before the
    // connection is reported up, is on a live channel and must go out (it used to be skipped silently).
    if (this.live) {
      try {
        fn();
        return;
      } catch {
        // The channel closed under us: counted below.
      }
    }
    this.broker.staleSettle(this.queue, what, this.msg.properties.correlationId as string | undefined);
  }
}
