/**
 * Everything that happens to a delivery before it waits for a slot, as Celery's `worker/strategy.py` does it:
 * decode (refused or undecodable to the dead-letter queue), look the task up (unknown: rejected or
 * forwarded), a misrouting warning, revoked or expired (discarded as REVOKED), and the ETA plan: run now,
 * hold until due, park in the broker's delay topology, or refuse an ETA beyond its range. What is admitted
 * is handed on (`reserve`) and never comes back here; what is not is settled here.
 */
import type { ResultBackend } from '../../backend/backend.js';
import { exceptionInfo } from '../../backend/meta.js';
import type { Broker, Delivery } from '../../broker/broker.js';
import { copyProperties } from '../../broker/republish.js';
import { NotRegisteredError, ProtocolError, coerceError, hasCode } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { Serializer } from '../../protocol/content.js';
import { decodeTaskMessage } from '../../protocol/decode.js';
import type { TaskMessage } from '../../protocol/types.js';
import { ANY_QUEUE, type AnyTask } from '../../registry/define-task.js';
import type { Registry } from '../../registry/registry.js';
import { type Discard, storeQuietly } from '../discard.js';
import type { TaskEvents } from '../events.js';
import type { HeldJobs } from '../held.js';
import type { Job } from '../job.js';
import type { PublishHold } from '../publish-hold.js';
import type { Outcome } from '../settle/decide.js';
import type { Settler } from '../settle/settler.js';
import { delayRangeInWords, offload, planEta } from './eta.js';
import type { Forwarder } from './forward.js';

export interface IntakeSettings {
  acceptContent: Serializer[];
  maxBodyBytes?: number;
  deadLetterSuffix: string;
  /** ETAs further away than `holdMaxMs` are parked in the broker's delay topology; null = hold them all. */
  delayedDelivery: { holdMaxMs: number } | null;
}

export interface IntakeOptions<D> {
  broker: Broker;
  backend: ResultBackend;
  registry: Registry<D>;
  /** Jobs waiting for their ETA. */
  held: HeldJobs<Job>;
  discard: Discard;
  /** Set when unknown task names are forwarded. */
  forwarder: Forwarder | undefined;
  settler: Settler;
  logger: Logger;
  events: TaskEvents;
  settings: Readonly<IntakeSettings>;
  /** False while the worker starts or stops: a held job that comes due then is left to go back to its queue. */
  running(): boolean;
  /** Hands an admitted job on, to wait for a slot. */
  reserve(job: Job): void;
  /**
   * Where an early-ack countdown waits while the broker refuses publishes (a resource alarm), acked, instead of
   * in a prefetch slot; with the acks_late default of the worker's tasks.
   */
  parkHold?: { hold: PublishHold; acksLate: (task: Job['task']) => boolean };
}

export class Intake<D> {
  /** Messages whose far ETA was moved into the delay topology. */
  offloaded = 0;

  constructor(private readonly o: IntakeOptions<D>) {}

  /**
   * Decides where a delivery goes: refused, forwarded, discarded, parked, held, or reserved for a slot. A
   * message reserved for a slot is admitted without a promise (returns nothing); the other ways may wait on the
   * broker.
   */
  admit(delivery: Delivery): Promise<void> | void {
    let msg: TaskMessage;
    try {
      if (delivery.unreadable !== undefined) {
        throw new ProtocolError('PROTOCOL_DECODE', 'the broker could not read the message', delivery.unreadable);
      }
      msg = decodeTaskMessage(delivery.raw, {
        accept: this.o.settings.acceptContent,
        maxBodyBytes: this.o.settings.maxBodyBytes ?? 0,
      });
    } catch (err) {
      return this.refuse(delivery, coerceError(err));
    }
    const task = this.o.registry.find(msg.task);
    return task ? this.admitTask(delivery, msg, task) : this.admitUnknown(delivery, msg);
  }

  private async refuse(delivery: Delivery, e: Error): Promise<void> {
    const outcome: Outcome = hasCode(e, 'PROTOCOL_DECODE') ? { kind: 'undecodable' } : { kind: 'refused' };
    this.o.logger.error(`refused a message on ${delivery.queue}: ${e.message}`, {
      queue: delivery.queue,
      code: (e as ProtocolError).code,
      correlation_id: delivery.raw.properties.correlationId,
    });
    this.o.events.poisoned(delivery.queue, e.message);
    await this.o.settler.settle(delivery, outcome, e.message);
  }

  /** A task this worker has not loaded: loaded now if the registry can, else forwarded or refused. */
  private async admitUnknown(delivery: Delivery, msg: TaskMessage): Promise<void> {
    const task = await this.loadStub(msg);
    if (task === null) return;
    if (!task) return this.notRegistered(delivery, msg);
    return this.admitTask(delivery, msg, task);
  }

  private admitTask(delivery: Delivery, msg: TaskMessage, task: AnyTask<D>): Promise<void> | void {
    if (task.queue !== delivery.queue && task.queue !== ANY_QUEUE) {
      this.o.logger.warn(
        `task ${msg.task}[${msg.id}] is misrouted: declared for ${task.queue}, received on ${delivery.queue}`,
        {
          task: msg.task,
          id: msg.id,
          queue: delivery.queue,
          declared_queue: task.queue,
        },
      );
    }
    if (this.o.discard.applies(msg)) return this.o.discard.discard({ delivery, msg });
    this.o.events.received(msg);
    const job: Job = { delivery, msg, task };
    const delayMs = msg.eta ? msg.eta.epochMs - Date.now() : 0;
    switch (planEta(delayMs, this.delayed(), this.o.broker.capabilities.maxDelayMs)) {
      case 'beyond-range':
        return this.beyondDelayRange(job, delayMs);
      case 'offload':
        return this.offload(job, delayMs);
      case 'hold':
        return this.hold(job, delayMs);
      case 'now':
        return this.o.reserve(job);
    }
  }

  /** The hold bound of the settings, lowered to what the broker lets a consumer hold (its `maxHoldMs`). */
  private delayed(): { holdMaxMs: number } | null {
    const d = this.o.settings.delayedDelivery;
    const cap = this.o.broker.capabilities.maxHoldMs;
    return d && cap !== undefined && cap < d.holdMaxMs ? { holdMaxMs: cap } : d;
  }

  /**
   * Never hold a far ETA (ADR-030): the message goes, unchanged, into the delay topology (confirmed), and
   * only then is acked. Held unacked instead, it would take a prefetch slot, and RabbitMQ's
   * consumer_timeout (30 min by default) would close the channel (Celery issue #6760).
   */
  private async offload(job: Job, delayMs: number): Promise<void> {
    const { delivery, msg } = job;
    if (await this.parkLater(job)) return;
    try {
      await offload(this.o.broker, delivery, delayMs);
    } catch (err) {
      this.o.logger.warn(`could not park ${msg.task}[${msg.id}] in the delay topology; holding it`, {
        error: coerceError(err).message,
      });
      this.hold(job, delayMs);
      return;
    }
    this.offloaded++;
    await this.o.settler.settle(delivery, { kind: 'offloaded' }, '');
    this.o.logger.debug(`parked ${msg.task}[${msg.id}] until ${msg.eta?.iso ?? ''}`, {
      task: msg.task,
      id: msg.id,
      queue: delivery.queue,
    });
  }

  /**
   * While the broker refuses publishes (RabbitMQ blocks a connection that publishes under a memory or disk alarm),
   * a park would wait for the whole alarm with its message in a prefetch slot: a few countdowns among quick
   * tasks fill the window, and the tasks that publish nothing stop too. An early-ack countdown goes to the
   * publish hold instead (bounded; sent again until the broker takes it, written to the state db at shutdown)
   * and its message is acked, as its run would ack it at start. A late-ack one keeps its message unacked
   * until it is parked: a crash meanwhile must leave it in the broker.
   */
  private async parkLater(job: Job): Promise<boolean> {
    const { delivery, msg, task } = job;
    const park = this.o.parkHold;
    if (!park || !this.o.broker.blocked || !msg.eta || park.acksLate(task)) return false;
    await park.hold.hold(
      {
        id: msg.id,
        what: 'countdown',
        kind: 'queue',
        queue: delivery.queue,
        dueAt: msg.eta.epochMs,
        body: delivery.raw.body,
        properties: copyProperties(delivery.raw),
      },
      new Error(`the broker refuses publishes (${this.o.broker.blocked.reason})`),
    );
    this.offloaded++;
    await this.o.settler.settle(delivery, { kind: 'offloaded' }, '');
    return true;
  }

  /**
   * An ETA the delay topology cannot hold (28 bits of seconds, 8.5 years): refused to the dead-letter queue
   * with the reason, rather than held unacked for years in a prefetch slot (and the consumer_timeout).
   */
  private async beyondDelayRange(job: Job, delayMs: number): Promise<void> {
    const { delivery, msg } = job;
    const reason = `eta ${msg.eta?.iso ?? ''} is ${Math.ceil(delayMs / 1000)} s away, beyond the delay topology's range of ${Math.floor(this.o.broker.capabilities.maxDelayMs / 1000)} s (${delayRangeInWords(this.o.broker.capabilities.maxDelayMs)})`;
    this.o.logger.error(`refused ${msg.task}[${msg.id}] on ${delivery.queue}: ${reason}`, {
      task: msg.task,
      id: msg.id,
      queue: delivery.queue,
    });
    this.o.events.poisoned(delivery.queue, reason);
    await this.o.settler.settle(delivery, { kind: 'refused' }, reason);
  }

  /**
   * The task of a stub, loaded on the first message that names it; undefined for a name not registered, null
   * when its code could not be loaded. That is a defect of the worker's build, not of the message, which stays
   * unacked: it goes back to its queue when this worker's connection closes, for a worker that can run it.
   */
  private async loadStub(msg: TaskMessage): Promise<AnyTask<D> | undefined | null> {
    try {
      return await this.o.registry.load(msg.task);
    } catch (err) {
      this.o.logger.error(`could not load task ${msg.task} for ${msg.id}; its message stays unacked`, {
        task: msg.task,
        id: msg.id,
        error: coerceError(err).message,
      });
      return null;
    }
  }

  private async notRegistered(delivery: Delivery, msg: TaskMessage): Promise<void> {
    let reason: string | undefined;
    if (this.o.forwarder) {
      const r = await this.o.forwarder.forward(delivery, msg.task);
      if (r.kind === 'forwarded') return this.o.settler.settle(delivery, { kind: 'forwarded' }, '');
      if (r.kind === 'unpublished') {
        this.o.logger.error(`${r.reason}; requeueing it`, { task: msg.task, id: msg.id, queue: delivery.queue });
        return this.o.settler.settle(delivery, { kind: 'forward-unpublished' }, r.reason);
      }
      reason = r.reason;
    }
    const err = new NotRegisteredError(msg.task);
    this.o.logger.error(
      `received unregistered task ${msg.task}[${msg.id}]; rejected to ${delivery.queue}${this.o.settings.deadLetterSuffix}`,
      {
        task: msg.task,
        id: msg.id,
        queue: delivery.queue,
      },
    );
    await storeQuietly(this.o.backend, this.o.logger, msg, {
      state: 'FAILURE',
      result: exceptionInfo(err),
      traceback: null,
    });
    this.o.events.failed(msg, err, '');
    this.o.events.poisoned(delivery.queue, err.message);
    await this.o.settler.settle(delivery, { kind: 'not-registered' }, reason ?? err.message);
  }

  /**
   * Celery's ETA path: hold the message unacked until due. A held message occupies a prefetch slot (Celery
   * widens the window with a channel-wide QoS, which quorum queues refuse).
   */
  private hold(job: Job, delayMs: number): void {
    this.o.held.hold(job, delayMs, (due) => {
      if (!this.o.running()) return;
      if (this.o.discard.applies(due.msg)) void this.o.discard.discard(due);
      else this.o.reserve(due);
    });
  }
}
