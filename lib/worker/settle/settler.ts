/**
 * Turns an outcome into broker operations: `decide()` says what, the settler does it, in order: the
 * dead-letter copy first (confirmed, with bounded retries, dead-letter.ts), then ack, reject or requeue.
 * A copy that cannot be made leaves the message unacked, never requeued into a loop.
 */
import type { PublishHold } from '../publish-hold.js';
import type { Broker, Delivery } from '../../broker/broker.js';
import { copyProperties } from '../../broker/republish.js';
import { coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { TaskMessage } from '../../protocol/types.js';
import type { TaskEvents } from '../events.js';
import type { DeadLetterCopies } from './dead-letter.js';
import { type AckPolicy, type Decision, type Outcome, decide } from './decide.js';

export interface SettlerOptions {
  broker: Pick<Broker, 'deadLetter' | 'send'>;
  deadLetters: DeadLetterCopies;
  events: Pick<TaskEvents, 'rejected'>;
  logger: Logger;
  deadLetterSuffix: string;
  nodeName: string;
  /** The policy of outcomes that are not a run's (intake, revokes). */
  defaults: AckPolicy;
  /** False once the worker stopped: a copy still retrying is given up (its message is redelivered). */
  running: () => boolean;
  /** Where the requeue of a cancelled early-ack task goes when the broker refuses it (publish-hold.ts). */
  hold?: PublishHold;
}

export class Settler {
  constructor(private readonly o: SettlerOptions) {}

  /** Settled at once (nothing returned) unless a dead-letter copy must be in the broker first. */
  settle(
    delivery: Delivery,
    outcome: Outcome,
    reason: string,
    policy: AckPolicy = this.o.defaults,
  ): Promise<void> | void {
    const decision = decide(outcome, policy);
    if (decision.deadLetter) return this.settleCopied(delivery, decision, reason);
    this.reply(delivery, decision);
  }

  private async settleCopied(delivery: Delivery, decision: Decision, reason: string): Promise<void> {
    if (await this.o.deadLetters.copy(delivery, reason, () => this.deadLetter(delivery, reason), this.o.running)) {
      this.reply(delivery, decision);
    }
  }

  private reply(delivery: Delivery, decision: Decision): void {
    if (decision.reply === 'ack') delivery.ack();
    else delivery.reject(decision.reply === 'requeue');
    if (decision.reply !== 'ack') {
      const id = delivery.raw.properties.correlationId;
      if (id) this.o.events.rejected(id, decision.reply === 'requeue');
    }
  }

  /**
   * A run that a cold shutdown cancelled goes back to its queue. A late-ack message is requeued; an early-ack
   * one was already acked, so Celery would lose it: we publish the original back to its queue (confirmed).
   */
  async giveBack(delivery: Delivery, msg: TaskMessage, policy: AckPolicy): Promise<void> {
    if (!delivery.settled) return this.settle(delivery, { kind: 'cancelled' }, 'cancelled by shutdown', policy);
    try {
      await this.o.broker.send(delivery.queue, { body: delivery.raw.body, properties: copyProperties(delivery.raw) });
    } catch (err) {
      if (!this.o.hold) {
        this.o.logger.error(`could not requeue cancelled task ${msg.task}[${msg.id}]`, {
          error: coerceError(err).message,
        });
        return;
      }
      // Held: written to the state db with the rest when the shutdown ends.
      const copy = { body: delivery.raw.body, properties: copyProperties(delivery.raw) };
      await this.o.hold.hold(
        { id: msg.id, what: 'requeue of a cancelled task', kind: 'queue', queue: delivery.queue, ...copy },
        err,
      );
    }
  }

  private async deadLetter(delivery: Delivery, reason: string): Promise<void> {
    await this.o.broker.deadLetter(delivery, {
      queue: delivery.queue + this.o.deadLetterSuffix,
      reason,
      by: this.o.nodeName,
    });
  }
}
