/**
 * A worker process with the fault tasks, for the tests that SIGKILL it. Configured like `smarter-worker`
 * (environment and flags); FAULT_ACKS_LATE=1 makes `fault.work` late-ack.
 */
import { createWorker } from '../../lib/app/app.js';
import { loadConfig } from '../../lib/config/settings.js';
import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';
import { createLogger } from '../../lib/logger.js';
import { installSignalHandlers } from '../../lib/app/signals.js';
import { faultTasks } from './fault-tasks.js';

// Without mingle unless the test asks for it: it waits Celery's full second for replies at every start.
const { values } = loadConfig(
  WORKER_SETTINGS,
  { SMARTER_WORKER_WITHOUT_MINGLE: 'true', ...process.env },
  process.argv.slice(2),
);
const queue = values.queues[0] ?? 'celery';
const logger = createLogger({ level: values.logLevel, json: true });
const tasks = faultTasks(queue, { acksLate: process.env.FAULT_ACKS_LATE === '1' });
const { app } = createWorker({
  config: values,
  tasks,
  deps: {},
  logger,
  defaultQueue: queue,
  onRemoteShutdown: () => process.exit(0),
});
installSignalHandlers(app, logger, (code) => process.exit(code));
await app.start();
