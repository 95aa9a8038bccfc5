/**
 * A dead-letter copy that fails is tried again with backoff, and never by requeueing: a requeued message comes
 * straight back and fails again (44,165 times in 12 s for one message with a header the copy could not encode).
 *
 * While its message is unacked (late ack, intake), the copy is tried a bounded number of times; after the last
 * attempt the message is left unacked: it stays on this channel and returns to its queue when the connection
 * closes, and an operator is told once, loudly, what failed. A message acked already (early ack: acked when its
 * task started) has no queue to return to: its copy goes to the publisher's hold (publish-hold.ts), sent again
 * with no attempt cap until the broker takes it, and kept in the state db across a shutdown.
 */
import type { Delivery } from '../../broker/broker.js';
import { coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { HeldPublish, PublishHold } from '../publish-hold.js';

export interface CopyRetryPolicy {
  attempts: number;
  initialMs: number;
  maxMs: number;
}

export const DEAD_LETTER_RETRY: CopyRetryPolicy = { attempts: 5, initialMs: 1000, maxMs: 8000 };

export type CopyResult = { ok: true } | { ok: false; attempts: number; error: Error };

/**
 * Runs `copy` until it succeeds, the attempts run out, or `stillWorthIt` says the message is gone
 * (its channel closed: the broker redelivers it, and a copy now would be a duplicate).
 */
export async function copyWithBackoff(
  copy: () => Promise<void>,
  stillWorthIt: () => boolean,
  onFailedAttempt: (attempt: number, error: Error, nextInMs: number | null) => void,
  policy: CopyRetryPolicy = DEAD_LETTER_RETRY,
): Promise<CopyResult> {
  let error: Error = new Error('no attempt made');
  for (let attempt = 1; attempt <= policy.attempts; attempt++) {
    try {
      await copy();
      return { ok: true };
    } catch (err) {
      error = coerceError(err);
      const last = attempt === policy.attempts || !stillWorthIt();
      const delay = Math.min(policy.maxMs, policy.initialMs * 2 ** (attempt - 1));
      onFailedAttempt(attempt, error, last ? null : delay);
      if (last) return { ok: false, attempts: attempt, error };
      await new Promise((r) => setTimeout(r, delay));
      if (!stillWorthIt()) return { ok: false, attempts: attempt, error };
    }
  }
  return { ok: false, attempts: policy.attempts, error };
}

/** Remembers which messages were reported, so each is reported loudly once (bounded, oldest forgotten). */
export class ReportedOnce {
  private readonly seen = new Set<string>();
  constructor(private readonly max = 10_000) {}
  first(id: string): boolean {
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    if (this.seen.size > this.max) {
      const oldest = this.seen.values().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    return true;
  }
}

/** The worker's dead-letter copies, made with bounded backoff, and what became of the ones that failed. */
export class DeadLetterCopies {
  /** Failed attempts, each counted; and messages left unacked after the last one. */
  failedAttempts = 0;
  unsent = 0;
  private readonly reported = new ReportedOnce();

  constructor(
    private readonly logger: Logger,
    private readonly suffix: string,
    private readonly policy: CopyRetryPolicy = DEAD_LETTER_RETRY,
    /** Where the copy of a message acked already goes when the broker refuses it, and our node name for it. */
    private readonly held?: { hold: PublishHold; by: string },
  ) {}

  /**
   * Makes the copy with `copy`; false when it could not be made: the caller then leaves the message
   * unacked (never dropped, never requeued into a loop), and it is said once, loudly. The copy of a message
   * acked already is held when refused (true: it is on its way).
   */
  async copy(delivery: Delivery, reason: string, copy: () => Promise<void>, running: () => boolean): Promise<boolean> {
    const id = delivery.raw.properties.correlationId ?? '(no correlation id)';
    const target = delivery.queue + this.suffix;
    if (delivery.settled && this.held) {
      try {
        await copy();
      } catch (err) {
        this.failedAttempts++;
        await this.held.hold.hold(this.heldCopy(delivery, id, target, reason, this.held.by), err);
      }
      return true;
    }
    const result = await copyWithBackoff(
      copy,
      () => delivery.live && running(),
      (attempt, error, nextInMs) => {
        this.failedAttempts++;
        if (nextInMs !== null) {
          this.logger.warn(`could not copy ${id} to ${target} (attempt ${attempt}); trying again in ${nextInMs} ms`, {
            error: error.message,
          });
        }
      },
      this.policy,
    );
    if (result.ok) return true;
    this.unsent++;
    const line =
      `could not copy message ${id} to ${target} after ${result.attempts} attempt(s): ${result.error.message}. ` +
      `It is left unacked (not lost): it returns to ${delivery.queue} when this connection closes. Fix the cause or move it by hand.`;
    const meta = {
      queue: delivery.queue,
      correlation_id: id,
      attempts: result.attempts,
      error: result.error.message,
      reason,
    };
    if (this.reported.first(id)) this.logger.error(line, meta);
    else this.logger.debug(line, meta);
    return false;
  }

  private heldCopy(delivery: Delivery, id: string, queue: string, reason: string, by: string): HeldPublish {
    return {
      id,
      what: 'dead-letter copy',
      kind: 'dead-letter',
      body: delivery.raw.body,
      properties: delivery.raw.properties,
      from: { queue: delivery.queue, exchange: delivery.exchange, routingKey: delivery.routingKey },
      why: { queue, reason, by, at: new Date().toISOString() },
    };
  }
}
