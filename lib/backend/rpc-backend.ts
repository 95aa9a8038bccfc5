/**
 * Celery's rpc:// backend: the state is a transient message to the caller's `reply_to` queue with the
 * task's `correlation_id`. With no reply_to there is nobody to tell, so nothing is sent (as in Celery).
 */
import type { Broker } from '../broker/broker.js';
import { encodeContent } from '../protocol/content.js';
import type { ResultBackend, StoreTarget } from './backend.js';
import { rpcBody, type StoredResult } from './meta.js';

export class RpcBackend implements ResultBackend {
  readonly kind = 'rpc';
  constructor(private readonly broker: Broker) {}

  async store(result: StoredResult, target: StoreTarget): Promise<void> {
    if (!target.replyTo) return;
    const content = encodeContent(rpcBody(result));
    await this.broker.send(target.replyTo, {
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

  async get(): Promise<null> {
    return null;
  }

  async close(): Promise<void> {}
}
