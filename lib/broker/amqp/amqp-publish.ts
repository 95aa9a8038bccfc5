/**
 * Publishing on the AMQP broker's confirm channel: every publish waits for its confirm, and a `mandatory`
 * one that no queue takes fails with UnroutableError instead of vanishing (the broker's basic.return).
 *
 * The publishes waiting for their confirm are kept here. When the broker renews a stuck channel (stuck-publish.ts)
 * they stay with the old one, whose answer their callers hear (a resend could put a second copy in a queue).
 * When their connection is lost or renewed, the answer is gone and the broker may hold them or not: they are
 * detached, in doubt, and neither failed nor sent again until connection.ts has settled the doubt on the next
 * connection (`detached`, `sendAgain`, `heldByBroker`).
 */
import type { ConfirmChannel } from 'amqplib';
import { BrokerError, UnroutableError } from '../../errors.js';
import type { PublishProperties } from '../../protocol/encode.js';
import { toAmqpTable } from './amqp-table.js';

interface Pending {
  exchange: string;
  routingKey: string;
  body: Buffer;
  properties: PublishProperties;
  mandatory: boolean;
  /** The channel it was last sent on; undefined while it waits for a new connection. */
  ch: ConfirmChannel | undefined;
  /** The fence of the connection it was last sent on (connection.ts): gone once that connection is. */
  fence: string | undefined;
  /** A dead-letter copy: in doubt, the dead-letter queue is looked in before it is sent again. */
  deadLetter: boolean;
  sentAt: number;
  /** Set when the broker routed a mandatory publish nowhere. */
  returned?: string;
  settle(err: Error | undefined): void;
  /** Resolves once settled, whichever way. */
  done: Promise<void>;
}

interface ReturnedMessage {
  fields: { exchange: string; routingKey: string; replyText?: string };
  content: Buffer;
}

export interface ConfirmHooks {
  acked?(): void;
  nacked?(): void;
}

/** A publish whose confirm was lost with its connection, as connection.ts sees it. */
export interface InDoubt {
  readonly exchange: string;
  readonly routingKey: string;
  readonly body: Buffer;
  readonly properties: PublishProperties;
  readonly fence: string | undefined;
  readonly deadLetter: boolean;
}

export class ConfirmPublisher {
  private readonly pending = new Set<Pending>();
  /** Channels the broker closed with an error (a 404, a 406): their unconfirmed publishes failed, not lost. */
  private readonly refused = new WeakSet<ConfirmChannel>();
  private readonly fences = new WeakMap<ConfirmChannel, string>();
  private shutDown: Error | undefined;

  constructor(private readonly hooks: ConfirmHooks = {}) {}

  /** Hears the returns of a fresh confirm channel, on a connection whose fence is `fence`. */
  watch(ch: ConfirmChannel, fence?: string): void {
    if (fence !== undefined) this.fences.set(ch, fence);
    // Emitted before the close that fails its unconfirmed publishes.
    ch.on('error', () => this.refused.add(ch));
    // RabbitMQ sends a mandatory message's basic.return before its basic.ack: the publish it belongs to is
    // still pending when the return arrives, and fails when its confirm does.
    ch.on('return', (m: ReturnedMessage) => {
      for (const p of this.pending) {
        if (
          p.ch === ch &&
          p.mandatory &&
          !p.returned &&
          p.exchange === m.fields.exchange &&
          p.routingKey === m.fields.routingKey &&
          p.body.equals(m.content)
        ) {
          p.returned = m.fields.replyText ?? 'NO_ROUTE';
          return;
        }
      }
    });
  }

  /** Publishes with confirm; `mandatory` ones that no queue takes fail with UnroutableError instead of vanishing. */
  async publish(
    ch: ConfirmChannel,
    exchange: string,
    routingKey: string,
    body: Buffer,
    properties: PublishProperties,
    mandatory = false,
    deadLetter = false,
  ): Promise<void> {
    let settled = (): void => undefined;
    const done = new Promise<void>((r) => (settled = r));
    await new Promise<void>((resolve, reject) => {
      const p: Pending = {
        done,
        exchange,
        routingKey,
        body,
        properties,
        mandatory,
        ch,
        fence: undefined,
        deadLetter,
        sentAt: Date.now(),
        settle: (err) => {
          this.pending.delete(p);
          settled();
          const returned = p.returned;
          if (err) reject(err);
          else if (returned !== undefined) reject(new UnroutableError(exchange, routingKey, returned));
          else resolve();
        },
      };
      this.pending.add(p);
      this.send(p, ch);
    });
  }

  private send(p: Pending, ch: ConfirmChannel): void {
    p.ch = ch;
    p.fence = this.fences.get(ch);
    p.sentAt = Date.now();
    delete p.returned;
    const props = p.properties;
    try {
      ch.publish(
        p.exchange,
        p.routingKey,
        p.body,
        {
          contentType: props.contentType,
          contentEncoding: props.contentEncoding,
          headers: toAmqpTable(props.headers),
          deliveryMode: props.deliveryMode,
          priority: props.priority,
          ...(props.correlationId !== undefined ? { correlationId: props.correlationId } : {}),
          ...(props.replyTo !== undefined ? { replyTo: props.replyTo } : {}),
          ...(props.expiration !== undefined ? { expiration: props.expiration } : {}),
          ...props.passthrough,
          mandatory: p.mandatory,
        },
        (err: unknown) => {
          // Sent again on another channel since: this channel's answer is no longer the caller's.
          if (p.ch !== ch) return;
          if (err && this.lostWith(ch, err)) {
            // Its connection is gone with the answer: the broker may hold it or not.
            p.ch = undefined;
            return;
          }
          if (err) {
            this.hooks.nacked?.();
            p.settle(new BrokerError('publish was not confirmed', { cause: err }));
          } else {
            this.hooks.acked?.();
            p.settle(undefined);
          }
        },
      );
    } catch (err) {
      p.settle(new BrokerError('publish was not confirmed', { cause: err }));
    }
  }

  /** A channel closed under a publish by the loss of its connection (not by a broker's error, nor at shutdown). */
  private lostWith(ch: ConfirmChannel, err: unknown): boolean {
    return (
      this.shutDown === undefined && !this.refused.has(ch) && err instanceof Error && err.message === 'channel closed'
    );
  }

  /** When the oldest publish still waiting for a confirm on `ch` was sent. */
  oldestUnconfirmed(ch: ConfirmChannel): number | undefined {
    let oldest: number | undefined;
    for (const p of this.pending) if (p.ch === ch && (oldest === undefined || p.sentAt < oldest)) oldest = p.sentAt;
    return oldest;
  }

  /** How many publishes wait for a confirm on `ch`. */
  waitingOn(ch: ConfirmChannel): number {
    let n = 0;
    for (const p of this.pending) if (p.ch === ch) n++;
    return n;
  }

  /** Resolves once nothing waits for a confirm on `ch` any more (confirmed, nacked, or failed by its close). */
  async settledOn(ch: ConfirmChannel): Promise<void> {
    const mine = [...this.pending].filter((p) => p.ch === ch);
    await Promise.all(mine.map((p) => p.done));
  }

  /** Takes every publish off the channel it was sent on (their connection is being replaced); returns how many. */
  detachAll(): number {
    let n = 0;
    for (const p of this.pending) {
      if (p.ch !== undefined) {
        p.ch = undefined;
        n++;
      }
    }
    return n;
  }

  /** The publishes in doubt: their connection was lost or renewed before they were confirmed. */
  detached(): InDoubt[] {
    return [...this.pending].filter((p) => p.ch === undefined);
  }

  /** A publish in doubt goes out again on `ch`. */
  sendAgain(d: InDoubt, ch: ConfirmChannel): void {
    const p = d as Pending;
    if (this.pending.has(p) && p.ch === undefined) this.send(p, ch);
  }

  /** The broker holds a publish in doubt (a copy was seen): its caller hears it was confirmed. */
  heldByBroker(d: InDoubt): void {
    const p = d as Pending;
    if (this.pending.has(p) && p.ch === undefined) p.settle(undefined);
  }

  /** The broker is closing: publishes in doubt fail, and so does every one whose channel closes from now on. */
  failDetached(err: Error): void {
    this.shutDown = err;
    for (const p of [...this.pending]) if (p.ch === undefined) p.settle(err);
  }
}
