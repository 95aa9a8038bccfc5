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
    doc: 'File that keeps each entry\'s last run (Celery `-s`), when no Redis store is set.',
  }),
  redisUrl: setting({
    env: ['SMARTER_BEAT_REDIS_URL', 'CELERY_REDBEAT_REDIS_URL'],
    flag: { long: 'redis-url' },
    default: '',
    parse: parsers.string,
    secret: true,
    doc: 'Keep the last runs in Redis instead (shared by every replica, like RedBeat).',
  }),
  lockName: setting({
    env: ['SMARTER_BEAT_LOCK'],
    default: 'smarter-beat.lock',
    parse: parsers.string,
    doc: 'Exclusive queue in the broker that only the sending replica holds.',
  }),
  maxLoopInterval: setting({
    env: ['CELERY_BEAT_MAX_LOOP_INTERVAL'],
    default: 5,
    parse: parsers.seconds,
    doc: 'Longest sleep between ticks; also how often a standby replica tries the lock.',
  }),
  httpPort: setting({ ...WORKER_SETTINGS.httpPort, env: ['SMARTER_BEAT_HTTP_PORT'] }),
};
