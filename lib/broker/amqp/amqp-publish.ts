/**
 * Publishing on the AMQP broker's confirm channel: every publish waits for its confirm, and a `mandatory`
 * one that no queue takes fails with UnroutableError instead of vanishing (the broker's basic.return).
 *
 * The publishes waiting for their confirm are kept here. When the broker renews a stuck channel (stuck-publish.ts)
 * they stay with the old one, whose answer their callers hear (a resend could put a second copy in a queue);
 * when it renews the connection they are sent again on the new one, since the old one's answer is gone.
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

export class ConfirmPublisher {
  private readonly pending = new Set<Pending>();

  constructor(private readonly hooks: ConfirmHooks = {}) {}

  /** Hears the returns of a fresh confirm channel. */
  watch(ch: ConfirmChannel): void {
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

  /** Sends every detached publish again on `ch`; returns how many. */
  resendDetached(ch: ConfirmChannel): number {
    const todo = [...this.pending].filter((p) => p.ch === undefined);
    for (const p of todo) this.send(p, ch);
    return todo.length;
  }

  /** The broker is closing: detached publishes will not be sent again. */
  failDetached(err: Error): void {
    for (const p of [...this.pending]) if (p.ch === undefined) p.settle(err);
  }
}
