/**
 * The one place that decides what happens to a message: ack, reject, requeue, and whether a copy goes to the
 * dead-letter queue first. Celery's rules (celery/worker/request.py, consumer.py), with one deliberate
 * difference: every message Celery would drop (undecodable, disallowed, invalid, unknown task) is first
 * copied to the queue's dead-letter queue, so nothing is lost without an operator being able to see it.
 *
 * Every settling of a message goes through `decide`, the ack of a message parked in the delay topology
 * included (`offloaded`). Its one exception is early ack (`ackOnStart`): a task without `acks_late` is acked
 * as it starts, as in Celery, so the outcome of its run settles nothing more (a settled delivery ignores a
 * second settle; the dead-letter copy of a final failure is still made).
 */

export type Outcome =
  /** The body could not be decoded (Celery acks it "so it doesn't enter a loop"). */
  | { kind: 'undecodable' }
  /** Content type not accepted, invalid fields, or not a task message (Celery rejects without requeue). */
  | { kind: 'refused' }
  /** Unknown task name (Celery: reject without requeue, FAILURE NotRegistered). */
  | { kind: 'not-registered' }
  /** Unknown task name, forwarded (confirmed) to the queue of the workers that implement it. */
  | { kind: 'forwarded' }
  /** Unknown task name whose forward was not confirmed: it stays, for this or another worker to try again. */
  | { kind: 'forward-unpublished' }
  /** A far ETA parked, confirmed, in the delay topology (never held unacked, ADR-030): this copy is done. */
  | { kind: 'offloaded' }
  /** Expired or revoked before it ran (Celery: REVOKED, ack). */
  | { kind: 'revoked' }
  | { kind: 'succeeded' }
  /** The task failed; its retries, if any, are exhausted or not allowed. */
  | { kind: 'failed' }
  /** A retry was published and confirmed. */
  | { kind: 'retried' }
  /** The retry could not be published: Celery raises Reject(requeue=False). */
  | { kind: 'retry-unpublishable' }
  | { kind: 'rejected'; requeue: boolean }
  | { kind: 'ignored' }
  | { kind: 'timed-out' }
  /** Cold shutdown cancelled the run: late-ack messages go back to the queue (Celery cancel_active_requests). */
  | { kind: 'cancelled' };

export interface AckPolicy {
  acksLate: boolean;
  acksOnFailureOrTimeout: boolean;
  /** A final failure also copies the message to the dead-letter queue (the task's `deadLetterOnExhaustion`). */
  deadLetterOnFailure?: boolean;
}

/** What the consumer answers the broker for the message. */
export type Reply = 'ack' | 'reject' | 'requeue';

export interface Decision {
  reply: Reply;
  /** Copy the message to the dead-letter queue (confirmed) before replying. */
  deadLetter: boolean;
}

/** Early-ack tasks are acked when they start, as in Celery: the one settling outside `decide` (see the header). */
export function ackOnStart(policy: AckPolicy): boolean {
  return !policy.acksLate;
}

export function decide(outcome: Outcome, policy: AckPolicy): Decision {
  switch (outcome.kind) {
    case 'undecodable':
      return { reply: 'ack', deadLetter: true };
    case 'refused':
    case 'not-registered':
      return { reply: 'reject', deadLetter: true };
    case 'forwarded':
    case 'offloaded':
    case 'revoked':
    case 'succeeded':
    case 'retried':
    case 'ignored':
      return { reply: 'ack', deadLetter: false };
    case 'retry-unpublishable':
      // Celery rejects without requeue; we keep the message in the dead-letter queue instead of dropping it.
      return { reply: 'reject', deadLetter: true };
    case 'rejected':
      return outcome.requeue ? { reply: 'requeue', deadLetter: false } : { reply: 'reject', deadLetter: true };
    case 'failed':
      return policy.acksOnFailureOrTimeout
        ? { reply: 'ack', deadLetter: policy.deadLetterOnFailure ?? false }
        : { reply: 'reject', deadLetter: true };
    case 'timed-out':
      return policy.acksOnFailureOrTimeout
        ? { reply: 'ack', deadLetter: policy.deadLetterOnFailure ?? false }
        : { reply: 'requeue', deadLetter: false };
    case 'cancelled':
    case 'forward-unpublished':
      return { reply: 'requeue', deadLetter: false };
  }
}
