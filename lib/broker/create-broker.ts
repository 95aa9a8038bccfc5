/**
 * The one place that picks a broker implementation, by the URL's scheme (schemes.ts): everything else
 * holds a `Broker` and never knows which. amqp:// and amqps:// are RabbitMQ (lib/broker/amqp/); redis://,
 * rediss:// and sentinel:// are kombu's Redis layout (lib/broker/redis/).
 */
import { redactUrl } from '../config/settings.js';
import { BrokerError } from '../errors.js';
import type { Logger } from '../logger.js';
import { AmqpBroker } from './amqp/amqp-broker.js';
import type { TlsSettings } from '../config/tls.js';
import type { Broker, DelayQueueType } from './broker.js';
import { RedisBroker } from './redis/redis-broker.js';
import { brokerKindOf, knownSchemes } from './schemes.js';

export interface BrokerOptions {
  url: string;
  logger: Logger;
  /** Seconds between heartbeats on the connection (AMQP) or health checks (Redis). */
  heartbeatSeconds?: number;
  /** Name shown in the broker's client list (RabbitMQ management UI, Redis CLIENT LIST). */
  connectionName?: string;
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
  /** How long a send waits for a connection before it fails. */
  publishTimeoutMs?: number;
  /** Redis only: Celery's `broker_transport_options` that kombu's Redis transport reads. */
  redis?: RedisTransport;
  /** Celery's `broker_use_ssl`: amqps:// and rediss:// (not yet for sentinel://). */
  tls?: TlsSettings;
  /** RabbitMQ only: one connection attempt's budget before the next URL of a failover list is tried. */
  connectTimeoutMs?: number;
  /** RabbitMQ only: type of the task queues it creates (Celery's `task_default_queue_type`). */
  queueType?: DelayQueueType;
  /** SMARTER_WORKER_MAX_BODY_SIZE: on Redis, a heavier body is left in Redis and never fetched (redis-broker.ts). */
  maxBodyBytes?: number;
}

export interface RedisTransport {
  visibilityTimeoutSeconds: number;
  masterName: string | null;
  keyPrefix: string;
}

/** The setting `CELERY_BROKER_TRANSPORT_OPTIONS`, as the Redis broker takes it. */
export function redisOptionsOf(t: {
  visibilityTimeout: number;
  masterName: string | null;
  globalKeyprefix: string;
}): RedisTransport {
  return { visibilityTimeoutSeconds: t.visibilityTimeout, masterName: t.masterName, keyPrefix: t.globalKeyprefix };
}

export function createBroker(o: BrokerOptions): Broker {
  const kind = brokerKindOf(o.url);
  switch (kind) {
    case 'amqp':
      return new AmqpBroker(o);
    case 'redis':
      return new RedisBroker({
        url: o.url,
        logger: o.logger,
        ...(o.redis
          ? { visibilityTimeoutSeconds: o.redis.visibilityTimeoutSeconds, keyPrefix: o.redis.keyPrefix }
          : {}),
        ...(o.redis?.masterName ? { masterName: o.redis.masterName } : {}),
        ...(o.tls ? { tls: o.tls } : {}),
        ...(o.maxBodyBytes !== undefined ? { maxBodyBytes: o.maxBodyBytes } : {}),
      });
    case undefined:
      throw new BrokerError(`no broker for ${redactUrl(o.url)}: expected an ${knownSchemes()} URL`);
    default: {
      const unhandled: never = kind;
      throw new BrokerError(`no broker implementation for kind ${String(unhandled)}`);
    }
  }
}
