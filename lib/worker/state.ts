/**
 * The worker's life as a transition table: INITIALIZED → STARTING → RUNNING → DRAINING → STOPPED, with a
 * shutdown allowed from any state before STOPPED. Anything else (start twice, start after a shutdown) is a
 * `WorkerStateError`, never a second set of consumers on the same queues.
 */
import { WorkerStateError } from '../errors.js';

export type WorkerState = 'INITIALIZED' | 'STARTING' | 'RUNNING' | 'DRAINING' | 'STOPPED';

export const TRANSITIONS: Readonly<Record<WorkerState, readonly WorkerState[]>> = Object.freeze({
  INITIALIZED: ['STARTING', 'DRAINING'],
  STARTING: ['RUNNING', 'DRAINING'],
  RUNNING: ['DRAINING'],
  DRAINING: ['STOPPED'],
  STOPPED: [],
});

export function canMove(from: WorkerState, to: WorkerState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The next state; throws when the table does not allow the move. */
export function move(from: WorkerState, to: WorkerState): WorkerState {
  if (!canMove(from, to)) {
    throw new WorkerStateError(
      `a worker cannot go from ${from} to ${to}${to === 'STARTING' ? ' (start it once)' : ''}`,
    );
  }
  return to;
}
