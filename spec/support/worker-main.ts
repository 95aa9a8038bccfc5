/**
 * A worker process with the test tasks, for tests that need a real process to kill or signal.
 * Configured by the same environment variables and flags as `smarter-worker`.
 */
import { createWorker } from '../../lib/app/app.js';
import { loadConfig } from '../../lib/config/settings.js';
import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';
import { createLogger } from '../../lib/logger.js';
import { startTracing, stopTracing } from '../../lib/tracing/tracing.js';
import { installSignalHandlers } from '../../lib/app/signals.js';
import { stampTask } from './stamp-task.js';
import { testTasks } from './test-tasks.js';

// Without mingle unless the test asks for it: it waits Celery's full second for replies at every start.
const { values } = loadConfig(
  WORKER_SETTINGS,
  { SMARTER_WORKER_WITHOUT_MINGLE: 'true', ...process.env },
  process.argv.slice(2),
);
const queue = values.queues[0] ?? 'celery';
const logger = createLogger({ level: values.logLevel, json: true });
await startTracing(process.env, values.brokerUrl, logger);
const { app } = createWorker({
  config: values,
  tasks: [
    ...testTasks(queue),
    stampTask(queue, { acksLate: process.env.STAMP_ACKS_LATE === '1', runMs: Number(process.env.STAMP_RUN_MS ?? '0') }),
  ],
  deps: {},
  logger,
  defaultQueue: queue,
  onRemoteShutdown: () => process.exit(0),
});
installSignalHandlers(app, logger, (code) => void stopTracing().finally(() => process.exit(code)));
await app.start();
