/**
 * A Beat process for the lock tests: one entry every second (`test.add`) to BEAT_QUEUE, last runs in Redis
 * under BEAT_STORE_KEY, the sender lock BEAT_LOCK. Prints one JSON line per send. With BEAT_BROKER_URL
 * (redis://) it sends through that broker, under BEAT_KEY_PREFIX, and holds the broker's own lock, as
 * smarter-beat does with a Redis broker. With BEAT_REDBEAT_PREFIX it keeps RedBeat's keys and takes RedBeat's lock
 * (timeout BEAT_LOCK_TIMEOUT_MS) instead, as smarter-beat does with a Redis store, and ships BEAT_ENTRIES (names,
 * comma-separated, default `tick`).
 */
import { AmqpBroker } from '../../lib/broker/amqp/amqp-broker.js';
import { AmqpLock } from '../../lib/broker/amqp/amqp-lock.js';
import { createBroker } from '../../lib/broker/create-broker.js';
import { createLogger } from '../../lib/logger.js';
import { Beat } from '../../beat/beat.js';
import { every } from '../../lib/beat/schedules.js';
import { RedisStore } from '../../beat/store.js';
import { redBeat } from '../../beat/redbeat.js';

const env = (k: string) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is required`);
  return v;
};
const logger = createLogger({ level: 'info', json: true });
const brokerUrl = process.env.BEAT_BROKER_URL;
const broker = brokerUrl
  ? createBroker({
      url: brokerUrl,
      logger,
      redis: { keyPrefix: process.env.BEAT_KEY_PREFIX ?? '', visibilityTimeoutSeconds: 3600, masterName: null },
    })
  : new AmqpBroker({ url: env('AMQP_URL'), logger });
const redbeatPrefix = process.env.BEAT_REDBEAT_PREFIX;
const names = (process.env.BEAT_ENTRIES ?? 'tick').split(',');
const where = redbeatPrefix
  ? redBeat({
      url: env('REDIS_URL'),
      keyPrefix: redbeatPrefix,
      lockTimeoutMs: Number(process.env.BEAT_LOCK_TIMEOUT_MS ?? 2500),
      logger,
      legacyKey: null,
    })
  : {
      store: new RedisStore(env('REDIS_URL'), env('BEAT_STORE_KEY')),
      lock: brokerUrl ? broker.lock(env('BEAT_LOCK')) : new AmqpLock(env('AMQP_URL'), env('BEAT_LOCK'), logger),
    };
const beat = new Beat({
  entries: names.map((name) => ({
    name,
    task: 'test.add',
    schedule: every(1),
    args: [1, 2],
    kwargs: {},
    options: { queue: env('BEAT_QUEUE') },
  })),
  store: where.store,
  broker,
  lock: where.lock,
  logger,
  maxLoopMs: 500,
});
await beat.start();
process.once('SIGTERM', () => void beat.stop().then(() => process.exit(0)));
