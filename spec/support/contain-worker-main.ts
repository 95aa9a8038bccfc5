/**
 * A worker process with the containment tasks, configured like `smarter-worker` (environment and flags), with the
 * same signal and error handlers. Two signals make errors that belong to no task, from outside any run:
 * SIGUSR2 an exception thrown from a timer, SIGHUP a rejection nobody handles.
 */
import { containTasks } from './contain-tasks.js';
import { runWorkerProcess } from './worker-process.js';

process.on('SIGUSR2', () =>
  setTimeout(() => {
    throw new Error('orphan: thrown from a timer no task started');
  }, 0),
);
process.on('SIGHUP', () => void Promise.reject(new Error('orphan: a rejection no task made')));
await runWorkerProcess({ tasks: containTasks });
