/**
 * The one place that picks a broker implementation, by the URL's scheme (schemes.ts): everything else
 * holds a `Broker` and never knows which. amqp:// and amqps:// are RabbitMQ (lib/broker/amqp/).
 */
import { redactUrl } from '../config/settings.js';
import { BrokerError } from '../errors.js';
import type { Logger } from '../logger.js';
import { AmqpBroker } from './amqp/amqp-broker.js';
import type { Broker } from './broker.js';
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
}

export function createBroker(o: BrokerOptions): Broker {
  const kind = brokerKindOf(o.url);
  switch (kind) {
    case 'amqp':
      return new AmqpBroker(o);
    // The Redis transport (issue 14): case 'redis': return new RedisBroker(o);
    case undefined:
      throw new BrokerError(`no broker for ${redactUrl(o.url)}: expected an ${knownSchemes()} URL`);
    default: {
      const unhandled: never = kind;
      throw new BrokerError(`no broker implementation for kind ${String(unhandled)}`);
    }
  }
}
