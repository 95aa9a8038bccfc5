/**
 * Publishing on the AMQP broker's confirm channel: every publish waits for its confirm, and a `mandatory`
 * one that no queue takes fails with UnroutableError instead of vanishing (the broker's basic.return).
 */
import type { ConfirmChannel } from 'amqplib';
import { BrokerError, UnroutableError } from '../../errors.js';
import type { PublishProperties } from '../../protocol/encode.js';
import { toAmqpTable } from './amqp-table.js';

interface PendingMandatory {
  exchange: string;
  routingKey: string;
  body: Buffer;
  returned?: string;
}

interface ReturnedMessage {
  fields: { exchange: string; routingKey: string; replyText?: string };
  content: Buffer;
}

export class ConfirmPublisher {
  /** Mandatory publishes awaiting their confirm; `returned` is set when the broker routed one nowhere. */
  private readonly mandatory = new Set<PendingMandatory>();

  /** Hears the returns of a fresh confirm channel. */
  watch(ch: ConfirmChannel): void {
    // RabbitMQ sends a mandatory message's basic.return before its basic.ack: the publish it belongs to is
    // still pending when the return arrives, and fails when its confirm does.
    ch.on('return', (m: ReturnedMessage) => {
      for (const p of this.mandatory) {
        if (!p.returned && p.exchange === m.fields.exchange && p.routingKey === m.fields.routingKey && p.body.equals(m.content)) {
          p.returned = m.fields.replyText ?? 'NO_ROUTE';
          return;
        }
      }
    });
  }

  /** Publishes with confirm; `mandatory` ones that no queue takes fail with UnroutableError instead of vanishing. */
  async publish(ch: ConfirmChannel, exchange: string, routingKey: string, body: Buffer, p: PublishProperties, mandatory = false): Promise<void> {
    const pending: PendingMandatory | undefined = mandatory ? { exchange, routingKey, body } : undefined;
    if (pending) this.mandatory.add(pending);
    await new Promise<void>((resolve, reject) => {
      const confirmed = (err: unknown) => {
        if (pending) this.mandatory.delete(pending);
        const returned = pending?.returned;
        if (err) reject(new BrokerError('publish was not confirmed', { cause: err }));
        else if (returned !== undefined) reject(new UnroutableError(exchange, routingKey, returned));
        else resolve();
      };
      ch.publish(
        exchange,
        routingKey,
        body,
        {
          contentType: p.contentType,
          contentEncoding: p.contentEncoding,
          headers: toAmqpTable(p.headers),
          deliveryMode: p.deliveryMode,
          priority: p.priority,
          ...(p.correlationId !== undefined ? { correlationId: p.correlationId } : {}),
          ...(p.replyTo !== undefined ? { replyTo: p.replyTo } : {}),
          ...(p.expiration !== undefined ? { expiration: p.expiration } : {}),
          ...p.passthrough,
          mandatory,
        },
        confirmed,
      );
    });
  }
}
