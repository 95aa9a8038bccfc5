/**
 * The one place that picks a result backend by its URL, beside `createBroker`: empty is none, rpc:// replies
 * through the broker, and redis:// or rediss:// is Celery's Redis backend.
 */
import type { Broker } from '../broker/broker.js';
import type { TlsSettings } from '../config/tls.js';
import { DisabledBackend, type ResultBackend } from './backend.js';
import { RedisBackend } from './redis-backend.js';
import { RpcBackend } from './rpc-backend.js';

export function createBackend(url: string, broker: Broker, expires: number | null, tls?: TlsSettings): ResultBackend {
  if (url === '') return new DisabledBackend();
  if (url.startsWith('rpc://')) return new RpcBackend(broker);
  return new RedisBackend(url, expires, tls);
}
