/** The broker contract on Redis: the Redis broker as `create-broker.ts` builds it for a redis:// URL, one key prefix per suite. */
import { createBroker } from '../../lib/broker/create-broker.js';
import { nullLogger } from '../../lib/logger.js';
import { describeBrokerConformance } from '../support/broker-conformance.js';
import { REDIS_URL, redisScope } from '../support/redis.js';

const scope = redisScope();
afterAll(async () => scope.close());

describeBrokerConformance('Redis (kombu layout)', {
  create: () => createBroker({ url: REDIS_URL, logger: nullLogger(), redis: { visibilityTimeoutSeconds: 3600, masterName: null, keyPrefix: scope.prefix } }),
});
