/**
 * A worker process with the containment tasks, configured like `smarter-worker` (environment and flags), with the
 * same signal and error handlers. Two signals make errors that belong to no task, from outside any run:
 * SIGUSR2 an exception thrown from a timer, SIGHUP a rejection nobody handles.
 */
import { createWorker } from '../../lib/app/app.js';
import { loadConfig } from '../../lib/config/settings.js';
import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';
import { createLogger } from '../../lib/logger.js';
import { installSignalHandlers } from '../../lib/app/signals.js';
import { containTasks } from './contain-tasks.js';

const { values } = loadConfig(
  WORKER_SETTINGS,
  { SMARTER_WORKER_WITHOUT_MINGLE: 'true', ...process.env },
  process.argv.slice(2),
);
const queue = values.queues[0] ?? 'celery';
const logger = createLogger({ level: values.logLevel, json: true });
const { app } = createWorker({
  config: values,
  tasks: containTasks(queue),
  deps: {},
  logger,
  defaultQueue: queue,
  onRemoteShutdown: () => process.exit(0),
});
installSignalHandlers(app, logger, (code) => process.exit(code));
process.on('SIGUSR2', () =>
  setTimeout(() => {
    throw new Error('orphan: thrown from a timer no task started');
  }, 0),
);
process.on('SIGHUP', () => void Promise.reject(new Error('orphan: a rejection no task made')));
await app.start();
