/** A task message the intake admitted: what the stages pass on, intake to slot to run. */
import type { Delivery } from '../broker/broker.js';
import type { TaskMessage } from '../protocol/types.js';
import type { AnyTask } from '../registry/define-task.js';

export interface Job {
  delivery: Delivery;
  msg: TaskMessage;
  task: AnyTask<unknown>;
}
