/** A message taken from a Redis list (or a fanout channel), settled by its delivery tag in `unacked`. */
import type { RawMessage } from '../../protocol/types.js';
import type { Delivery } from '../broker.js';
import type { Popped } from './transport.js';

export interface Settler {
  /** Resolves once Redis has the settle (or it was given up on). */
  settleByTag(tag: string, what: 'ack' | 'requeue' | 'drop'): Promise<void> | void;
  /** Whether the message is still this client's to run: false once its close restored it for others. */
  owns(tag: string): boolean;
}

/**
 * An envelope that does not parse is handed on whole, so the decoder refuses it and it is dead-lettered; one
 * sent without its body stays marked so, so that its dead-letter copy is made from Redis's whole message.
 */
function rawOf(p: Popped): RawMessage {
  if (p.envelope) return p.envelope.raw;
  return {
    body: Buffer.from(p.text, 'utf8'),
    properties: {
      contentType: 'application/x-invalid-kombu-envelope',
      headers: { 'x-envelope-error': p.error?.message ?? 'unreadable' },
    },
    ...(p.withheld !== undefined ? { withheldBodyBytes: p.withheld } : {}),
  };
}

export class RedisDelivery implements Delivery {
  settled = false;
  readonly raw: RawMessage;
  readonly exchange: string;
  readonly routingKey: string;
  readonly redelivered: boolean;

  readonly deliveryTag: string;
  readonly unreadable?: string;

  /** Keeps the decoded message, not the envelope text: a heavy message is not held twice while it is handled. */
  constructor(
    private readonly settler: Settler | null,
    readonly queue: string,
    popped: Popped,
  ) {
    this.deliveryTag = popped.deliveryTag;
    if (!popped.envelope) this.unreadable = popped.error?.message ?? 'unreadable envelope';
    this.raw = rawOf(popped);
    this.exchange = popped.envelope?.exchange ?? '';
    this.routingKey = popped.envelope?.routingKey ?? queue;
    this.redelivered = popped.envelope?.redelivered ?? false;
    if (!settler) this.settled = true;
  }

  /**
   * A Redis ack is by tag, not by connection, so a delivery stays live across reconnects; it is no longer
   * live once this client's close restored it to the queue for another consumer.
   */
  get live(): boolean {
    return this.settler === null || this.settled || this.settler.owns(this.deliveryTag);
  }

  private done: Promise<void> | void = undefined;

  ack(): void {
    this.settle('ack');
  }

  /** Resolves once Redis has the ack: the acks of one turn of the event loop go in one script (consumer-loop.ts). */
  async acked(): Promise<void> {
    await this.done;
  }

  reject(requeue: boolean): void {
    this.settle(requeue ? 'requeue' : 'drop');
  }

  private settle(what: 'ack' | 'requeue' | 'drop'): void {
    if (this.settled) return;
    this.settled = true;
    this.done = this.settler?.settleByTag(this.deliveryTag, what);
  }
}
