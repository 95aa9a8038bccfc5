/**
 * The single list of Smarter's tasks this worker runs. Each task declares its queue; `smarter-beat check`
 * and the test suite verify that every Beat entry names the queue its task declares.
 */
import type { AnyTask } from '../lib/registry/define-task.js';

export function smarterTasks(): AnyTask[] {
  return [];
}
