/** Starts a real worker (real RabbitMQ, optional real Redis backend) on unique queues, and stops it. */
import { createWorker } from '../../lib/app/app.js';
import { loadConfig } from '../../lib/config/settings.js';
import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';
import { type Logger, createLogger, nullLogger } from '../../lib/logger.js';
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { TaskEvents } from '../../lib/worker/events.js';
import { AMQP_URL, REDIS_URL, deleteQueues, uniqueName } from './amqp.js';
import { freePort } from './rabbit-node.js';
import { ResultReader } from './results.js';
import { testTasks } from './test-tasks.js';

export interface Harness {
  queue: string;
  worker: ReturnType<typeof createWorker>['worker'];
  broker: ReturnType<typeof createWorker>['broker'];
  app: ReturnType<typeof createWorker>['app'];
  stop(): Promise<void>;
}

/** The harnesses start workers without mingle; a test about it turns it back on with these. */
export const WITH_MINGLE = { SMARTER_WORKER_WITHOUT_MINGLE: 'false' } as const;

/** What both harnesses (this one and redis-harness.ts) take. */
export interface HarnessOptions {
  /** Settings over the harness's own. */
  env?: Record<string, string>;
  /** The test tasks unless given. */
  tasks?: (queue: string) => AnyTask[];
  /** The queue consumed, which also names the node. */
  queue?: string;
}

/** The settings both harnesses start a worker on `queue` with, before the broker's and the test's own. */
export function harnessSettings(queue: string): Record<string, string> {
  return {
    CELERY_WORKER_CONCURRENCY: '4',
    SMARTER_WORKER_QUEUES: queue,
    SMARTER_WORKER_SHUTDOWN_GRACE: '2',
    CELERY_WORKER_HOSTNAME: `${queue}@%h`,
    // Mingle waits Celery's full second for replies at every start; the tests about it turn it back on.
    SMARTER_WORKER_WITHOUT_MINGLE: 'true',
  };
}

/** The harnesses' logger: quiet unless TEST_LOG is set. */
export const harnessLogger = (): Logger =>
  process.env.TEST_LOG ? createLogger({ level: 'debug', json: false }) : nullLogger();

/**
 * One worker for the test file, storing results in the Redis backend: started before its tests and handed to `use`
 * with a reader of those results, both closed after them.
 */
export function workerForFile(
  env: Record<string, string>,
  use: (w: { h: Harness; results: ResultReader }) => void,
): void {
  fileWorker(env, false, use);
}

/** As workerForFile, with the worker's HTTP endpoint on a free port, whose base URL `use` is handed as well. */
export function httpWorkerForFile(
  env: Record<string, string>,
  use: (w: { h: Harness; base: string; results: ResultReader }) => void,
): void {
  fileWorker(env, true, use);
}

function fileWorker(
  env: Record<string, string>,
  http: boolean,
  use: (w: { h: Harness; base: string; results: ResultReader }) => void,
): void {
  let h: Harness | undefined;
  let results: ResultReader | undefined;
  beforeAll(async () => {
    const port = http ? await freePort() : 0;
    const httpEnv: Record<string, string> = http ? { SMARTER_WORKER_HTTP_PORT: String(port) } : {};
    h = await startWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL, ...env, ...httpEnv } });
    results = new ResultReader();
    use({ h, base: `http://127.0.0.1:${port}`, results });
  });
  afterAll(async () => {
    await h?.stop();
    await results?.close();
  });
}

/** Runs `fn` with a worker of its own, stopped after whatever `fn` did. */
export async function withWorker<T>(
  opts: Parameters<typeof startWorker>[0],
  fn: (h: Harness) => Promise<T>,
): Promise<T> {
  const h = await startWorker(opts);
  try {
    return await fn(h);
  } finally {
    await h.stop();
  }
}

export async function startWorker(
  opts: HarnessOptions & { events?: TaskEvents; deps?: unknown; logger?: Logger } = {},
): Promise<Harness> {
  const queue = opts.queue ?? uniqueName('q');
  const { values } = loadConfig(WORKER_SETTINGS, {
    ...harnessSettings(queue),
    CELERY_BROKER_URL: AMQP_URL,
    ...opts.env,
  });
  const logger = opts.logger ?? harnessLogger();
  const { worker, broker, app } = createWorker({
    config: values,
    tasks: (opts.tasks ?? testTasks)(queue),
    deps: opts.deps ?? {},
    logger,
    defaultQueue: queue,
    ...(opts.events ? { events: opts.events } : {}),
  });
  await app.start();
  return {
    queue,
    worker,
    broker,
    app,
    async stop() {
      await app.shutdown();
      await deleteQueues([queue, `${queue}.dead_letter`]);
    },
  };
}
