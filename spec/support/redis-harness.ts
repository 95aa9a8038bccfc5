/** Starts a real worker on Redis as the broker, under its own kombu key prefix, and stops it. */
import { createWorker } from '../../lib/app/app.js';
import { RedisBroker } from '../../lib/broker/redis/redis-broker.js';
import { loadConfig } from '../../lib/config/settings.js';
import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';
import { uniqueName } from './amqp.js';
import { type HarnessOptions, harnessLogger, harnessSettings } from './harness.js';
import { REDIS_URL, type RedisScope, redisScope } from './redis.js';
import { testTasks } from './test-tasks.js';

export interface RedisHarness {
  queue: string;
  scope: RedisScope;
  broker: RedisBroker;
  app: ReturnType<typeof createWorker>['app'];
  worker: ReturnType<typeof createWorker>['worker'];
  /** For Python: `BROKER_TRANSPORT_OPTIONS` with our key prefix. */
  pythonEnv: Record<string, string>;
  stop(): Promise<void>;
}

export async function startRedisWorker(
  opts: HarnessOptions & {
    visibilityTimeoutSeconds?: number;
    scope?: RedisScope;
    /** Another Redis server as the broker (results stay on the shared one). */
    url?: string;
  } = {},
): Promise<RedisHarness> {
  const scope = opts.scope ?? redisScope(opts.url);
  const queue = opts.queue ?? uniqueName('rq');
  const { values } = loadConfig(WORKER_SETTINGS, {
    ...harnessSettings(queue),
    CELERY_RESULT_BACKEND: REDIS_URL,
    CELERY_BROKER_URL: opts.url ?? REDIS_URL,
    CELERY_BROKER_TRANSPORT_OPTIONS: JSON.stringify({
      global_keyprefix: scope.prefix,
      ...(opts.visibilityTimeoutSeconds !== undefined ? { visibility_timeout: opts.visibilityTimeoutSeconds } : {}),
    }),
    ...opts.env,
  });
  const logger = harnessLogger();
  // Chosen by the URL, as in production.
  const { app, worker, broker } = createWorker({
    config: values,
    tasks: (opts.tasks ?? testTasks)(queue),
    deps: {},
    logger,
    defaultQueue: queue,
  });
  if (!(broker instanceof RedisBroker)) throw new Error('a redis:// broker URL did not give the Redis broker');
  await app.start();
  const transport: Record<string, unknown> = { global_keyprefix: scope.prefix };
  if (opts.visibilityTimeoutSeconds !== undefined) transport.visibility_timeout = opts.visibilityTimeoutSeconds;
  return {
    queue,
    scope,
    broker,
    app,
    worker,
    pythonEnv: { BROKER_TRANSPORT_OPTIONS: JSON.stringify(transport) },
    async stop() {
      await app.shutdown();
      if (!opts.scope) await scope.close();
    },
  };
}
