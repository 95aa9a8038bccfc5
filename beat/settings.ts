/** What `smarter-beat` reads: the broker and Smarter's queue settings the workers read, and where its state lives. */
import { parsers, type Setting } from '../lib/config/settings.js';
import { WORKER_SETTINGS } from '../lib/app/worker-settings.js';
import { SMARTER_SETTINGS } from '../tasks/settings.js';

const setting = <T>(s: Setting<T>): Setting<T> => s;

export const BEAT_SETTINGS = {
  brokerUrl: WORKER_SETTINGS.brokerUrl,
  brokerUseSsl: WORKER_SETTINGS.brokerUseSsl,
  brokerConnectionTimeout: WORKER_SETTINGS.brokerConnectionTimeout,
  brokerTransportOptions: WORKER_SETTINGS.brokerTransportOptions,
  logLevel: WORKER_SETTINGS.logLevel,
  operationalQueue: SMARTER_SETTINGS.operationalQueue,
  infrastructureQueue: SMARTER_SETTINGS.infrastructureQueue,
  scheduleFile: setting({
    env: ['SMARTER_BEAT_SCHEDULE_FILE'],
    flag: { long: 'schedule', short: 's' },
    default: 'celerybeat-schedule.json',
    parse: parsers.string,
    doc: "File that keeps each entry's last run (Celery `-s`), when no Redis store is set.",
  }),
  redisUrl: setting({
    env: ['SMARTER_BEAT_REDIS_URL', 'CELERY_REDBEAT_REDIS_URL'],
    flag: { long: 'redis-url' },
    default: '',
    parse: parsers.string,
    secret: true,
    doc: "Keep the schedule in Redis as RedBeat keeps it, and take RedBeat's lock: replicas, and a Python Beat with RedBeat on the same Redis, are one scheduler.",
  }),
  redbeatKeyPrefix: setting({
    env: ['CELERY_REDBEAT_KEY_PREFIX'],
    default: 'redbeat:',
    parse: parsers.string,
    doc: "RedBeat's `redbeat_key_prefix`: every RedBeat key starts with it (with a Redis store).",
  }),
  redbeatLockKey: setting({
    env: ['CELERY_REDBEAT_LOCK_KEY'],
    default: '',
    parse: parsers.string,
    doc: "RedBeat's `redbeat_lock_key` (empty: `<prefix>:lock`; prefixed when it does not start with the prefix). smarter-beat always takes a lock.",
  }),
  redbeatLockTimeout: setting({
    env: ['CELERY_REDBEAT_LOCK_TIMEOUT'],
    default: null,
    parse: parsers.optSeconds,
    doc: "RedBeat's `redbeat_lock_timeout`: how long the lock outlives a holder that stops extending it (None: five times the loop interval).",
  }),
  lockName: setting({
    env: ['SMARTER_BEAT_LOCK'],
    default: 'smarter-beat.lock',
    parse: parsers.string,
    doc: 'Without a Redis store: the lock in the broker that only the sending replica holds (an exclusive queue on RabbitMQ).',
  }),
  maxLoopInterval: setting({
    env: ['CELERY_BEAT_MAX_LOOP_INTERVAL'],
    default: 5,
    parse: parsers.seconds,
    doc: 'Longest sleep between ticks; also how often a standby replica tries the lock.',
  }),
  httpPort: setting({ ...WORKER_SETTINGS.httpPort, env: ['SMARTER_BEAT_HTTP_PORT'] }),
};
