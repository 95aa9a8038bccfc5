/**
 * A worker process with the test tasks, for tests that need a real process to kill or signal.
 * Configured by the same environment variables and flags as `smarter-worker`.
 */
import { startTracing, stopTracing } from '../../lib/tracing/tracing.js';
import { stampTask } from './stamp-task.js';
import { testTasks } from './test-tasks.js';
import { runWorkerProcess } from './worker-process.js';

await runWorkerProcess({
  tasks: (queue) => [
    ...testTasks(queue),
    stampTask(queue, { acksLate: process.env.STAMP_ACKS_LATE === '1', runMs: Number(process.env.STAMP_RUN_MS ?? '0') }),
  ],
  before: (values, logger) => startTracing(process.env, values.brokerUrl, logger),
  exit: (code) => void stopTracing().finally(() => process.exit(code)),
});
