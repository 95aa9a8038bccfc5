/**
 * Turns an outcome into broker operations: `decide()` says what, the settler does it, in order: the
 * dead-letter copy first (confirmed, with bounded retries, dead-letter.ts), then ack, reject or requeue.
 * A copy that cannot be made leaves the message unacked, never requeued into a loop.
 */
import type { Broker, Delivery } from '../../broker/broker.js';
import type { DeadLetterCopies } from './dead-letter.js';
import { type AckPolicy, type Outcome, decide } from './decide.js';
import type { TaskEvents } from '../events.js';

export interface SettlerOptions {
  deadLetterSuffix: string;
  nodeName: string;
  /** The policy of outcomes that are not a run's (intake, revokes). */
  defaults: AckPolicy;
  /** False once the worker stopped: a copy still retrying is given up (its message is redelivered). */
  running: () => boolean;
}

export class Settler {
  constructor(
    private readonly broker: Pick<Broker, 'deadLetter'>,
    private readonly deadLetters: DeadLetterCopies,
    private readonly events: Pick<TaskEvents, 'rejected'>,
    private readonly opts: SettlerOptions,
  ) {}

  async settle(
    delivery: Delivery,
    outcome: Outcome,
    reason: string,
    policy: AckPolicy = this.opts.defaults,
  ): Promise<void> {
    const decision = decide(outcome, policy);
    if (
      decision.deadLetter &&
      !(await this.deadLetters.copy(delivery, reason, () => this.deadLetter(delivery, reason), this.opts.running))
    ) {
      return;
    }
    if (decision.settle === 'ack') delivery.ack();
    else delivery.reject(decision.settle === 'requeue');
    if (decision.settle !== 'ack') {
      const id = delivery.raw.properties.correlationId;
      if (id) this.events.rejected(id, decision.settle === 'requeue');
    }
  }

  private async deadLetter(delivery: Delivery, reason: string): Promise<void> {
    await this.broker.deadLetter(delivery, {
      queue: delivery.queue + this.opts.deadLetterSuffix,
      reason,
      by: this.opts.nodeName,
    });
  }
}
