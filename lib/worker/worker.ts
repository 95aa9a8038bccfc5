/**
 * The worker: consumes task queues and moves each delivery one way through three stages, as Celery's consumer
 * does: the intake admits it (intake/: decode, revoked or expired, the ETA), the slots start it under the
 * concurrency cap and its task's rate limit (slots.ts), the runs run it (run/), the settler answers the broker for
 * it (settle/). Nothing goes back up a stage. Its life is an explicit state machine; `shutdown()` is Celery's warm
 * shutdown (stop consuming, let running tasks finish within a grace period) turning cold when the grace runs out or
 * a second signal comes.
 */
import { randomUUID } from 'node:crypto';
import type { ResultBackend } from '../backend/backend.js';
import type { Broker, DelayQueueType, Delivery } from '../broker/broker.js';
import { RetryTaskError, TaskRevokedError, coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Serializer } from '../protocol/content.js';
import type { TaskMessage } from '../protocol/types.js';
import type { Registry } from '../registry/registry.js';
import type { RunView, WorkerControl, WorkerCounters } from './control.js';
import { Discard } from './discard.js';
import { noEvents, type TaskEvents } from './events.js';
import { HeldJobs } from './held.js';
import { Forwarder, type UnknownTaskPolicy } from './intake/forward.js';
import { Intake } from './intake/intake.js';
import type { Job } from './job.js';
import { TaskPublisher } from './publisher.js';
import { RevokedSet } from './revoked.js';
import { carryOver, sendCarriedOver } from './carry-over.js';
import type { ActiveRun, RunDefaults } from './run/run-task.js';
import { Runs } from './run/runs.js';
import { acksLateOf } from './run/run-options.js';
import { DeadLetterCopies } from './settle/dead-letter.js';
import { Settler } from './settle/settler.js';
import { Slots } from './slots.js';
import { type WorkerState, move } from './state.js';
import { TaskLimits } from './task-limits.js';

export type { WorkerState } from './state.js';

export interface WorkerOptions {
  nodeName: string;
  queues: readonly string[];
  concurrency: number;
  prefetchMultiplier: number;
  /** Slots at start when they change at run time (autoscale); default `concurrency`, which sizes the prefetch. */
  initialSlots?: number;
  acceptContent: Serializer[];
  /** Heaviest body decoded (as sent and decompressed); heavier ones are refused undecoded. 0/absent: no limit. */
  maxBodyBytes?: number;
  defaults: RunDefaults;
  defaultQueue: string;
  deadLetterSuffix: string;
  shutdownGraceMs: number;
  /** ETAs further away than `holdMaxMs` are parked in the broker's delay topology; null = hold them all. */
  delayedDelivery: { queueType: DelayQueueType; holdMaxMs: number } | null;
  /** File that keeps revoked ids across restarts; null keeps them in memory. */
  stateDb: string | null;
  /** Unknown task names: rejected as Celery does (default), or forwarded unchanged to a queue. */
  unknownTasks?: UnknownTaskPolicy;
  /**
   * Celery's `worker_cancel_long_running_tasks_on_connection_loss` (default true): a late-ack run whose message
   * came on a connection that is lost is cancelled, since the broker gives that message to another worker.
   */
  cancelOnConnectionLoss?: boolean;
}

export class Worker<D = unknown> implements WorkerControl {
  private stateValue: WorkerState = 'INITIALIZED';
  readonly publisher: TaskPublisher;
  /** Set when unknown task names are forwarded. */
  readonly forwarder: Forwarder | undefined;
  /** The queues consumed, changed by remote control (add/cancel consumer); the options stay as configured. */
  private readonly consumed: string[];
  private readonly held = new HeldJobs<Job>();
  private readonly intake: Intake<D>;
  private readonly settler: Settler;
  private readonly discard: Discard;
  private readonly limits = new TaskLimits();
  private readonly runs: Runs<D>;
  private readonly slots: Slots<D>;
  private shutdownPromise: Promise<void> | undefined;
  readonly revoked: RevokedSet;
  readonly deadLetters: DeadLetterCopies;
  readonly startedAt = Date.now();

  constructor(
    private readonly broker: Broker,
    private readonly backend: ResultBackend,
    private readonly registry: Registry<D>,
    private readonly deps: D,
    private readonly logger: Logger,
    readonly options: Readonly<WorkerOptions>,
    private readonly events: TaskEvents = noEvents,
  ) {
    this.publisher = new TaskPublisher(broker, {
      defaultQueue: options.defaultQueue,
      queueOf: (name) => registry.queueOf(name),
      origin: options.nodeName,
      oid: randomUUID(),
      delay: options.delayedDelivery !== null,
      logger,
    });
    const unknown = options.unknownTasks;
    this.forwarder =
      unknown?.mode === 'forward'
        ? new Forwarder(broker, unknown.queue, options.nodeName, logger, (t, to) => events.forwarded?.(t, to))
        : undefined;
    this.deadLetters = new DeadLetterCopies(logger, options.deadLetterSuffix, undefined, {
      hold: this.publisher.held,
      by: options.nodeName,
    });
    this.consumed = [...options.queues];
    this.revoked = new RevokedSet(options.stateDb, logger);
    const settler = new Settler({
      broker,
      deadLetters: this.deadLetters,
      events,
      logger,
      deadLetterSuffix: options.deadLetterSuffix,
      nodeName: options.nodeName,
      defaults: options.defaults,
      running: () => this.state !== 'STOPPED',
      hold: this.publisher.held,
    });
    this.settler = settler;
    this.runs = new Runs({
      deps,
      backend,
      publisher: this.publisher,
      settler,
      logger,
      events,
      nodeName: options.nodeName,
      defaults: options.defaults,
    });
    this.discard = new Discard({
      revoked: this.revoked,
      backend,
      events,
      settler,
      logger,
      ...(options.defaults.resultExtended ? { extended: { nodeName: options.nodeName } } : {}),
    });
    this.slots = new Slots({
      runs: this.runs,
      limits: this.limits,
      discard: this.discard,
      held: this.held,
      logger,
      size: options.initialSlots ?? options.concurrency,
      running: () => this.state === 'RUNNING',
    });
    this.intake = new Intake({
      broker,
      backend,
      registry,
      held: this.held,
      discard: this.discard,
      forwarder: this.forwarder,
      settler,
      logger,
      events,
      settings: options,
      running: () => this.state === 'RUNNING',
      reserve: (job) => this.slots.reserve(job),
      parkHold: { hold: this.publisher.held, acksLate: (task) => acksLateOf(task, options.defaults) },
    });
    broker.on('disconnected', () => {
      this.slots.dropStale();
      if (options.cancelOnConnectionLoss !== false) this.cancelLost();
    });
  }

  /**
   * The late-ack runs of a lost connection: their messages go back to the queue and to another worker, so each is
   * cancelled (its signal aborted, RETRY stored, as Celery's `Request.cancel`) rather than run twice at once.
   */
  private cancelLost(): void {
    for (const run of this.active.values()) {
      if (run.finalized || run.delivery.settled || run.delivery.live) continue;
      const { msg } = run;
      this.logger.warn(
        `cancelled ${msg.task}[${msg.id}]: the connection its message came on was lost, and the broker redelivers it`,
        { task: msg.task, id: msg.id, queue: run.delivery.queue },
      );
      run.control.abort(new RetryTaskError('cancelled: the connection its message came on was lost', null, 0));
    }
  }

  /** The runs under way, by key. */
  get active(): Map<string, ActiveRun> {
    return this.runs.active;
  }

  /** Runs done, by task name. */
  get processed(): Map<string, number> {
    return this.runs.processed;
  }

  /** Runs reported for waiting past their budget, by task name. */
  get overWaitBudget(): Map<string, number> {
    return this.runs.overWaitBudget;
  }

  get state(): WorkerState {
    return this.stateValue;
  }

  /** Every change goes through the transition table (state.ts). */
  private set state(next: WorkerState) {
    this.stateValue = move(this.stateValue, next);
    this.logger.info(`worker ${this.options.nodeName} ${next.toLowerCase()}`, { state: next });
  }

  /** Celery's `rate_limit` command: a new limit for a task on this worker, its bucket reset. Throws for a bad rate string. */
  setRateLimit(taskName: string, rate: string | null): boolean {
    if (!this.registry.has(taskName)) return false;
    this.limits.setRate(taskName, rate);
    return true;
  }

  /** Celery's `time_limit` command: new limits for a task on this worker, in seconds. */
  setTimeLimits(taskName: string, soft: number | null, hard: number | null): boolean {
    if (!this.registry.has(taskName)) return false;
    this.limits.setTimes(taskName, soft, hard);
    return true;
  }

  get nodeName(): string {
    return this.options.nodeName;
  }

  get concurrency(): number {
    return this.slots.size;
  }

  /** Celery's pool_grow/pool_shrink/autoscale: runs at once from now on (the prefetch stays as started). */
  resize(slots: number): void {
    this.slots.resize(slots);
  }

  /** Reserved or held messages dropped unrun because their channel closed (the broker redelivers them). */
  get droppedStale(): number {
    return this.slots.droppedStale;
  }

  get prefetchCount(): number {
    return this.options.prefetchMultiplier * this.options.concurrency;
  }

  get queues(): readonly string[] {
    return this.consumed;
  }

  counters(): WorkerCounters {
    return {
      active: this.active.size,
      reserved: this.slots.reservedCount,
      held: this.held.size,
      processed: this.processed,
      overWaitBudget: this.overWaitBudget,
      droppedStale: this.droppedStale,
      offloaded: this.intake.offloaded,
      deadLetterFailedAttempts: this.deadLetters.failedAttempts,
      deadLetterUnsent: this.deadLetters.unsent,
      publishesHeld: this.publisher.held.size,
    };
  }

  activeRuns(): RunView[] {
    return [...this.active.values()].map((r) => ({
      msg: r.msg,
      startedAt: r.startedAt,
      acknowledged: r.delivery.settled,
      queue: r.delivery.queue,
    }));
  }

  registeredNames(): string[] {
    return this.registry.names();
  }

  /** Messages received and waiting for a slot (Celery's "reserved"). */
  reservedMessages(): TaskMessage[] {
    return this.slots.reservedJobs().map((j) => j.msg);
  }

  /** ETA messages held until due (Celery's "scheduled"). */
  heldMessages(): TaskMessage[] {
    return this.held.jobs().map((j) => j.msg);
  }

  learnRevoked(entries: Iterable<readonly [string, number]>): number {
    const added = this.revoked.merge(entries);
    if (added > 0) this.revoked.persist();
    return added;
  }

  /**
   * Celery's `revoke`: remember the ids (queued, reserved and held copies are discarded when reached);
   * with `terminate`, abort running ones now. Returns the ids that were running.
   */
  revokeTasks(ids: readonly string[], terminate: boolean): string[] {
    for (const id of ids) this.revoked.add(id);
    this.revoked.persist();
    const running: string[] = [];
    for (const run of this.active.values()) {
      if (!ids.includes(run.msg.id)) continue;
      running.push(run.msg.id);
      if (terminate) run.control.abort(new TaskRevokedError('terminated'));
    }
    return running;
  }

  /** Celery's `revoke_by_stamped_headers`: a message that arrives later with one of these stamps is not run. */
  revokeStamps(headers: Readonly<Record<string, readonly string[]>>): void {
    this.revoked.addStamps(headers);
  }

  /** Celery's `add_consumer`: consume one more queue from now on. */
  async addConsumer(queue: string): Promise<void> {
    if (this.consumed.includes(queue)) return;
    await this.publisher.ensureQueue(queue);
    await this.broker.consume(queue, (d) => this.onDelivery(d));
    this.consumed.push(queue);
  }

  /** Celery's `cancel_consumer`. */
  async cancelConsumer(queue: string): Promise<void> {
    await this.broker.cancel(queue);
    const i = this.consumed.indexOf(queue);
    if (i >= 0) this.consumed.splice(i, 1);
  }

  /** The queues consumed right now (Celery's `active_queues`): a queue the broker cancelled is not, until restored. */
  activeQueues(): string[] {
    return this.consumed.filter((q) => this.broker.isConsuming(q));
  }

  get reservedCount(): number {
    return this.slots.reservedCount;
  }

  get heldCount(): number {
    return this.held.size;
  }

  async start(): Promise<void> {
    this.state = 'STARTING';
    this.revoked.load();
    sendCarriedOver(this.publisher.held, this.options.stateDb, this.logger, () => this.state === 'STOPPED');
    const prefetch = Math.min(this.options.prefetchMultiplier * this.options.concurrency, 65_535);
    // The delay levels (on AMQP 29 exchanges, 29 queues, 57 bindings) are declared beside the consumers, not
    // before them: the broker binds the queues to them whichever is first, and a send into them waits for them.
    // The consumers' first declaration goes out first; the levels' in the same tick, before any delivery.
    const consumers = (async () => {
      for (const queue of this.consumed) {
        await this.publisher.ensureQueue(queue);
        await this.broker.consume(queue, (d) => this.onDelivery(d), { prefetch });
      }
    })();
    const delayed = this.options.delayedDelivery
      ? this.broker.declareDelayed({ queueType: this.options.delayedDelivery.queueType })
      : undefined;
    // Awaited below, or dropped if the consumers fail first: never an unhandled rejection.
    delayed?.catch(() => undefined);
    await consumers;
    // A shutdown that came while the consumers were being set up has already moved on.
    if (this.state !== 'STARTING') return;
    // Tasks run while the levels are still being declared (on a new broker, 28 quorum queues take a few hundred
    // ms): only a countdown needs them, and its send waits for them.
    this.state = 'RUNNING';
    // Deliveries that arrived while the consumers were being set up are waiting in `reserved`.
    this.slots.pump();
    try {
      await delayed;
    } catch (err) {
      // Without the levels no countdown can be kept: the worker stops as in a warm shutdown, and the tasks already
      // running end first. A retry among them that cannot be sent is held or dead-lettered as any unsendable retry.
      if (this.state === 'RUNNING') await this.shutdown();
      throw err;
    }
  }

  /** Messages whose far ETA was moved into the delay topology. */
  get offloaded(): number {
    return this.intake.offloaded;
  }

  private onDelivery(delivery: Delivery): void {
    try {
      this.intake.admit(delivery)?.catch(this.intakeFailed);
    } catch (err) {
      this.intakeFailed(err);
    }
  }

  /** Intake never throws by design; if it does, the message is left unacked for redelivery, never lost. */
  private readonly intakeFailed = (err: unknown): void => {
    this.logger.error('unexpected error while receiving a message', { error: coerceError(err).stack });
  };

  /**
   * Warm shutdown; idempotent. Held and reserved messages stay unacked and go back to their queues when the
   * connection closes. Running tasks get `graceMs`; then the shutdown turns cold (see `Runs.cancelAll`).
   */
  shutdown(graceMs: number = this.options.shutdownGraceMs): Promise<void> {
    this.shutdownPromise ??= this.drain(graceMs);
    return this.shutdownPromise;
  }

  /** A second signal: turn an ongoing warm shutdown cold now. */
  async coldShutdown(): Promise<void> {
    await this.stopIntake();
    await this.runs.cancelAll();
    await this.shutdown(0);
  }

  /** Stops taking messages; what is held or reserved stays unacked and returns to its queue on close. */
  private async stopIntake(): Promise<void> {
    if (this.state === 'DRAINING' || this.state === 'STOPPED') return;
    this.state = 'DRAINING';
    for (const q of this.consumed) await this.broker.cancel(q).catch(() => undefined);
    this.held.clear();
    this.slots.clear();
  }

  private async drain(graceMs: number): Promise<void> {
    if (this.state === 'STOPPED') return;
    const graceEnds = Date.now() + graceMs;
    await this.stopIntake();
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace-over'>((resolve) => {
      timer = setTimeout(() => resolve('grace-over'), graceMs);
    });
    const result = await Promise.race([this.slots.idle().then(() => 'idle' as const), graceOver]);
    if (timer) clearTimeout(timer);
    if (result === 'grace-over' && this.active.size > 0) {
      this.logger.warn(`shutdown grace of ${graceMs} ms is over; cancelling ${this.active.size} running task(s)`);
      await this.runs.cancelAll();
    }
    this.revoked.persist();
    await carryOver(this.publisher.held, this.options.stateDb, this.logger, graceEnds - Date.now());
    await this.backend.close().catch(() => undefined);
    this.events.flush?.();
    await this.broker.close().catch(() => undefined);
    this.state = 'STOPPED';
  }
}
