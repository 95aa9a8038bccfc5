/**
 * The broker contract on Redis: the Redis broker as `create-broker.ts` builds it for a redis:// URL, one key
 * prefix per suite. No `crash` fixture: on Redis an ack is by delivery tag and survives a lost connection, and
 * what a lost client held comes back only after the visibility timeout (kombu's rule), which other tests prove.
 */
import { createBroker } from '../../lib/broker/create-broker.js';
import { nullLogger } from '../../lib/logger.js';
import { describeBrokerConformance } from '../support/broker-conformance.js';
import { REDIS_URL, redisScope } from '../support/redis.js';

const scope = redisScope();
afterAll(async () => scope.close());

describeBrokerConformance('Redis (kombu layout)', {
  create: () =>
    createBroker({
      url: REDIS_URL,
      logger: nullLogger(),
      redis: { visibilityTimeoutSeconds: 3600, masterName: null, keyPrefix: scope.prefix },
    }),
});
