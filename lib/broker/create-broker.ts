/** The broker for a URL, chosen by its scheme: RabbitMQ for amqp(s)://, kombu's Redis layout for redis(s):// and sentinel://. */
import type { Logger } from '../logger.js';
import { Redis } from 'ioredis';
import { AmqpBroker } from './amqp-broker.js';
import { BrokerLock } from './amqp-lock.js';
import type { Broker } from './broker.js';
import { redisTarget } from './redis/connection.js';
import { RedisLeaseLock } from './redis/lease-lock.js';
import { RedisBroker } from './redis/redis-broker.js';

export interface BrokerChoice {
  url: string;
  logger: Logger;
  connectionName?: string;
  heartbeatSeconds?: number;
  redis?: { visibilityTimeoutSeconds: number; masterName: string | null; keyPrefix: string };
}

export function isRedisUrl(url: string): boolean {
  return /^(rediss?|sentinel):\/\//i.test(url.trim());
}

export function createBroker(c: BrokerChoice): Broker {
  if (isRedisUrl(c.url)) {
    return new RedisBroker({
      url: c.url,
      logger: c.logger,
      ...(c.redis ? { visibilityTimeoutSeconds: c.redis.visibilityTimeoutSeconds, keyPrefix: c.redis.keyPrefix } : {}),
      ...(c.redis?.masterName ? { masterName: c.redis.masterName } : {}),
    });
  }
  return new AmqpBroker({
    url: c.url,
    logger: c.logger,
    ...(c.heartbeatSeconds !== undefined ? { heartbeatSeconds: c.heartbeatSeconds } : {}),
    ...(c.connectionName !== undefined ? { connectionName: c.connectionName } : {}),
  });
}

/** Beat's single-sender lock: RabbitMQ's exclusive queue, or on Redis a lease renewed while held (as RedBeat's). */
export interface SenderLock {
  readonly held: boolean;
  tryAcquire(): Promise<boolean>;
  release(): Promise<void>;
  on(event: 'lost', listener: () => void): unknown;
}

export function createLock(c: BrokerChoice & { name: string; leaseMs?: number }): SenderLock {
  if (!isRedisUrl(c.url)) return new BrokerLock(c.url, c.name, c.logger);
  const target = redisTarget(c.url, c.redis?.masterName ?? undefined);
  const redis = new Redis({ ...target.options, connectionName: `lock ${c.name}` });
  redis.on('error', () => undefined);
  return new RedisLeaseLock(redis, `${c.redis?.keyPrefix ?? ''}${c.name}`, c.logger, c.leaseMs);
}
