/**
 * A worker process with the fault tasks, for the tests that SIGKILL it. Configured like `smarter-worker`
 * (environment and flags); FAULT_ACKS_LATE=1 makes `fault.work` late-ack.
 */
import { faultTasks } from './fault-tasks.js';
import { runWorkerProcess } from './worker-process.js';

await runWorkerProcess({
  tasks: (queue) => faultTasks(queue, { acksLate: process.env.FAULT_ACKS_LATE === '1' }),
});
