/**
 * A job revoked or expired before it ran is discarded, as Celery's `Request.revoked()`: REVOKED stored, the
 * revoked event sent, the message acked. Asked twice, as Celery asks: when the intake admits the job (or its
 * held ETA comes due) and again when the job reaches a slot, since a revoke may come while it waits.
 */
import type { ResultBackend } from '../backend/backend.js';
import { type StoredResult, exceptionInfo } from '../backend/meta.js';
import type { Delivery } from '../broker/broker.js';
import { TaskRevokedError, coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { TaskMessage } from '../protocol/types.js';
import type { TaskEvents } from './events.js';
import { extendedFields } from './run/after-run.js';
import type { RevokedSet } from './revoked.js';
import type { Settler } from './settle/settler.js';

export interface DiscardOptions {
  revoked: RevokedSet;
  backend: ResultBackend;
  events: TaskEvents;
  settler: Settler;
  logger: Logger;
  /** Celery's `result_extended`: REVOKED is stored with the task's name, arguments and this worker's name. */
  extended?: { nodeName: string };
}

export class Discard {
  constructor(private readonly o: DiscardOptions) {}

  /** The message must not run: its id was revoked, its `expires` is past, or it carries a revoked stamp. */
  applies(msg: TaskMessage): boolean {
    return (
      this.o.revoked.has(msg.id) ||
      (msg.expires !== null && msg.expires.epochMs <= Date.now()) ||
      this.o.revoked.stampOf(msg) !== null
    );
  }

  async discard(job: { delivery: Delivery; msg: TaskMessage }): Promise<void> {
    const { msg, delivery } = job;
    const stamp = this.o.revoked.has(msg.id) ? null : this.o.revoked.stampOf(msg);
    const expired = !this.o.revoked.has(msg.id) && stamp === null;
    const reason = expired ? 'expired' : 'revoked';
    this.o.logger.info(
      `discarding ${reason} task ${msg.task}[${msg.id}]${stamp !== null ? ` (revoked by header: ${stamp})` : ''}`,
      { task: msg.task, id: msg.id, queue: delivery.queue },
    );
    if (expired) this.o.revoked.add(msg.id);
    await storeQuietly(this.o.backend, this.o.logger, msg, {
      state: 'REVOKED',
      result: exceptionInfo(new TaskRevokedError(reason)),
      traceback: null,
      ...(this.o.extended ? { extended: extendedFields(msg, this.o.extended.nodeName, delivery.routingKey) } : {}),
    });
    this.o.events.revoked(msg.id, { expired, terminated: false, signum: null });
    await this.o.settler.settle(delivery, { kind: 'revoked' }, reason);
  }
}

/** Stores the end state of a message that never ran; a backend that cannot take it is logged, never fatal. */
export async function storeQuietly(
  backend: ResultBackend,
  logger: Logger,
  msg: TaskMessage,
  r: { state: 'FAILURE' | 'REVOKED'; result: unknown; traceback: string | null; extended?: StoredResult['extended'] },
): Promise<void> {
  try {
    await backend.store(
      { taskId: msg.id, children: null, ...r },
      { replyTo: msg.replyTo, correlationId: msg.correlationId },
    );
  } catch (err) {
    logger.error(`could not store ${r.state} for ${msg.task}[${msg.id}]`, { error: coerceError(err).message });
  }
}
