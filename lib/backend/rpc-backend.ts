/**
 * Celery's rpc:// backend: the state is a transient message to the caller's `reply_to` queue with the
 * task's `correlation_id`. With no reply_to there is nobody to tell, so nothing is sent (as in Celery).
 */
import type { Broker, OutgoingMessage } from '../broker/broker.js';
import { hasCode } from '../errors.js';
import { encodeContent } from '../protocol/content.js';
import type { ResultBackend, StoreTarget } from './backend.js';
import { rpcBody, type StoredResult } from './meta.js';

export class RpcBackend implements ResultBackend {
  readonly kind = 'rpc';
  constructor(private readonly broker: Broker) {}

  async store(result: StoredResult, target: StoreTarget): Promise<void> {
    if (!target.replyTo) return;
    const content = encodeContent(rpcBody(result));
    await this.reply(target.replyTo, {
      body: content.body,
      properties: {
        contentType: content.contentType,
        contentEncoding: content.contentEncoding,
        headers: {},
        deliveryMode: 1,
        priority: 0,
        correlationId: target.correlationId,
      },
    });
  }

  private async reply(replyTo: string, m: OutgoingMessage): Promise<void> {
    try {
      await this.broker.send(replyTo, m);
    } catch (err) {
      // The caller's reply queue is gone (it stopped waiting): there is nobody left to tell, as in Celery.
      if (!hasCode(err, 'BROKER_UNROUTABLE')) throw err;
    }
  }

  async get(): Promise<null> {
    return null;
  }

  async close(): Promise<void> {}
}
