/**
 * Everything that happens to a delivery before it reaches a slot, as Celery's `worker/strategy.py` does it:
 * decode (refused or undecodable to the dead-letter queue), look the task up (unknown: rejected or
 * forwarded), a misrouting warning, revoked or expired (discarded as REVOKED), and the ETA plan: run now,
 * hold until due, park in the broker's delay topology, or refuse an ETA beyond its range. The worker owns the
 * slots and the settling; this module decides where each message goes.
 */
import type { ResultBackend } from '../backend/backend.js';
import { type StoredResult, exceptionInfo } from '../backend/meta.js';
import { extendedFields } from './after-run.js';
import type { Broker, Delivery } from '../broker/broker.js';
import { NotRegisteredError, ProtocolError, TaskRevokedError, coerceError, hasCode } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Serializer } from '../protocol/content.js';
import { decodeTaskMessage } from '../protocol/decode.js';
import type { TaskMessage } from '../protocol/types.js';
import { ANY_QUEUE, type AnyTask } from '../registry/define-task.js';
import type { Registry } from '../registry/registry.js';
import type { Outcome } from './decide.js';
import type { TaskEvents } from './events.js';
import { type HeldJobs, delayRangeInWords, offload, planEta } from './eta.js';
import type { Forwarder } from './forward.js';
import type { RevokedSet } from './revoked.js';

export interface Job {
  delivery: Delivery;
  msg: TaskMessage;
  task: AnyTask<unknown>;
}

export interface IntakeOptions {
  acceptContent: Serializer[];
  maxBodyBytes?: number;
  deadLetterSuffix: string;
  /** ETAs further away than `holdMaxMs` are parked in the broker's delay topology; null = hold them all. */
  delayedDelivery: { holdMaxMs: number } | null;
  nodeName: string;
  defaults: { resultExtended?: boolean };
}

/** What the intake needs of the worker that owns it. */
export interface IntakeHost {
  running(): boolean;
  settle(delivery: Delivery, outcome: Outcome, reason: string): Promise<void>;
  /** Into a slot, now or when one frees. */
  enqueue(job: Job): void;
  onOffloaded(): void;
}

export class Intake<D> {
  constructor(
    private readonly broker: Broker,
    private readonly backend: ResultBackend,
    private readonly registry: Registry<D>,
    private readonly revoked: RevokedSet,
    private readonly held: HeldJobs<Job>,
    private readonly forwarder: Forwarder | undefined,
    private readonly logger: Logger,
    private readonly events: TaskEvents,
    private readonly options: Readonly<IntakeOptions>,
    private readonly host: IntakeHost,
  ) {}

  async receive(delivery: Delivery): Promise<void> {
    let msg: TaskMessage;
    try {
      if (delivery.unreadable !== undefined) {
        throw new ProtocolError('PROTOCOL_DECODE', 'the broker could not read the message', delivery.unreadable);
      }
      msg = decodeTaskMessage(delivery.raw, {
        accept: this.options.acceptContent,
        maxBodyBytes: this.options.maxBodyBytes ?? 0,
      });
    } catch (err) {
      const e = coerceError(err);
      const outcome: Outcome = hasCode(e, 'PROTOCOL_DECODE') ? { kind: 'undecodable' } : { kind: 'refused' };
      this.logger.error(`refused a message on ${delivery.queue}: ${e.message}`, {
        queue: delivery.queue,
        code: (e as ProtocolError).code,
        correlation_id: delivery.raw.properties.correlationId,
      });
      this.events.poisoned(delivery.queue, e.message);
      await this.host.settle(delivery, outcome, e.message);
      return;
    }
    const task = this.registry.find(msg.task);
    if (!task) {
      await this.notRegistered(delivery, msg);
      return;
    }
    if (task.queue !== delivery.queue && task.queue !== ANY_QUEUE) {
      this.logger.warn(
        `task ${msg.task}[${msg.id}] is misrouted: declared for ${task.queue}, received on ${delivery.queue}`,
        {
          task: msg.task,
          id: msg.id,
          queue: delivery.queue,
          declared_queue: task.queue,
        },
      );
    }
    if (this.isRevokedOrExpired(msg)) {
      await this.revoke({ delivery, msg, task });
      return;
    }
    this.events.received(msg);
    const job: Job = { delivery, msg, task };
    const delayMs = msg.eta ? msg.eta.epochMs - Date.now() : 0;
    switch (planEta(delayMs, this.delayed(), this.broker.capabilities.maxDelayMs)) {
      case 'beyond-range':
        return this.beyondDelayRange(job, delayMs);
      case 'offload':
        return this.offload(job, delayMs);
      case 'hold':
        return this.hold(job, delayMs);
      case 'now':
        return this.host.enqueue(job);
    }
  }

  /** The hold bound of the settings, lowered to what the broker lets a consumer hold (its `maxHoldMs`). */
  private delayed(): { holdMaxMs: number } | null {
    const d = this.options.delayedDelivery;
    const cap = this.broker.capabilities.maxHoldMs;
    return d && cap !== undefined && cap < d.holdMaxMs ? { holdMaxMs: cap } : d;
  }

  /**
   * Never hold a far ETA (ADR-030): the message goes, unchanged, into the delay topology (confirmed), and
   * only then is acked. Held unacked instead, it would take a prefetch slot, and RabbitMQ's
   * consumer_timeout (30 min by default) would close the channel (Celery issue #6760).
   */
  private async offload(job: Job, delayMs: number): Promise<void> {
    const { delivery, msg } = job;
    try {
      await offload(this.broker, delivery, delayMs);
    } catch (err) {
      this.logger.warn(`could not park ${msg.task}[${msg.id}] in the delay topology; holding it`, {
        error: coerceError(err).message,
      });
      this.hold(job, delayMs);
      return;
    }
    this.host.onOffloaded();
    await this.host.settle(delivery, { kind: 'offloaded' }, '');
    this.logger.debug(`parked ${msg.task}[${msg.id}] until ${msg.eta?.iso ?? ''}`, {
      task: msg.task,
      id: msg.id,
      queue: delivery.queue,
    });
  }

  /**
   * An ETA the delay topology cannot hold (28 bits of seconds, 8.5 years): refused to the dead-letter queue
   * with the reason, rather than held unacked for years in a prefetch slot (and the consumer_timeout).
   */
  private async beyondDelayRange(job: Job, delayMs: number): Promise<void> {
    const { delivery, msg } = job;
    const reason = `eta ${msg.eta?.iso ?? ''} is ${Math.ceil(delayMs / 1000)} s away, beyond the delay topology's range of ${Math.floor(this.broker.capabilities.maxDelayMs / 1000)} s (${delayRangeInWords(this.broker.capabilities.maxDelayMs)})`;
    this.logger.error(`refused ${msg.task}[${msg.id}] on ${delivery.queue}: ${reason}`, {
      task: msg.task,
      id: msg.id,
      queue: delivery.queue,
    });
    this.events.poisoned(delivery.queue, reason);
    await this.host.settle(delivery, { kind: 'refused' }, reason);
  }

  isRevokedOrExpired(msg: TaskMessage): boolean {
    return (
      this.revoked.has(msg.id) ||
      (msg.expires !== null && msg.expires.epochMs <= Date.now()) ||
      this.revoked.stampOf(msg) !== null
    );
  }

  private async notRegistered(delivery: Delivery, msg: TaskMessage): Promise<void> {
    let reason: string | undefined;
    if (this.forwarder) {
      const r = await this.forwarder.forward(delivery, msg.task);
      if (r.kind === 'forwarded') return this.host.settle(delivery, { kind: 'forwarded' }, '');
      if (r.kind === 'unpublished') {
        this.logger.error(`${r.reason}; requeueing it`, { task: msg.task, id: msg.id, queue: delivery.queue });
        return this.host.settle(delivery, { kind: 'forward-unpublished' }, r.reason);
      }
      reason = r.reason;
    }
    const err = new NotRegisteredError(msg.task);
    this.logger.error(
      `received unregistered task ${msg.task}[${msg.id}]; rejected to ${delivery.queue}${this.options.deadLetterSuffix}`,
      {
        task: msg.task,
        id: msg.id,
        queue: delivery.queue,
      },
    );
    await this.storeQuietly(msg, { state: 'FAILURE', result: exceptionInfo(err), traceback: null });
    this.events.failed(msg, err, '');
    this.events.poisoned(delivery.queue, err.message);
    await this.host.settle(delivery, { kind: 'not-registered' }, reason ?? err.message);
  }

  async revoke(job: Job): Promise<void> {
    const { msg, delivery } = job;
    const stamp = this.revoked.has(msg.id) ? null : this.revoked.stampOf(msg);
    const expired = !this.revoked.has(msg.id) && stamp === null;
    const reason = expired ? 'expired' : 'revoked';
    this.logger.info(
      `discarding ${reason} task ${msg.task}[${msg.id}]${stamp !== null ? ` (revoked by header: ${stamp})` : ''}`,
      {
        task: msg.task,
        id: msg.id,
        queue: delivery.queue,
      },
    );
    if (expired) this.revoked.add(msg.id);
    await this.storeQuietly(msg, {
      state: 'REVOKED',
      result: exceptionInfo(new TaskRevokedError(reason)),
      traceback: null,
      ...(this.options.defaults.resultExtended
        ? { extended: extendedFields(msg, this.options.nodeName, delivery.routingKey) }
        : {}),
    });
    this.events.revoked(msg.id, { expired, terminated: false, signum: null });
    await this.host.settle(delivery, { kind: 'revoked' }, reason);
  }

  /**
   * Celery's ETA path: hold the message unacked until due. A held message occupies a prefetch slot (Celery
   * widens the window with a channel-wide QoS, which quorum queues refuse).
   */
  hold(job: Job, delayMs: number): void {
    this.held.hold(job, delayMs, (due) => {
      if (!this.host.running()) return;
      if (this.isRevokedOrExpired(due.msg)) void this.revoke(due);
      else this.host.enqueue(due);
    });
  }

  private async storeQuietly(
    msg: TaskMessage,
    r: { state: 'FAILURE' | 'REVOKED'; result: unknown; traceback: string | null; extended?: StoredResult['extended'] },
  ): Promise<void> {
    try {
      await this.backend.store(
        { taskId: msg.id, children: null, ...r },
        { replyTo: msg.replyTo, correlationId: msg.correlationId },
      );
    } catch (err) {
      this.logger.error(`could not store ${r.state} for ${msg.task}[${msg.id}]`, { error: coerceError(err).message });
    }
  }
}
