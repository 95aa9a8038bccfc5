/**
 * Assembles a worker process from resolved settings and an application's task list: broker, result
 * backend, registry (Celery's built-ins included), worker. Applications (tasks/main.ts) add their tasks
 * and clients; nothing here knows which application it runs.
 */
import { createBackend } from '../backend/create-backend.js';
import { createBroker, redisOptionsOf } from '../broker/create-broker.js';
import type { Broker } from '../broker/broker.js';
import { type WorkerConfig, compileWorkerConfig } from './worker-config.js';
import type { Logger } from '../logger.js';
import { BUILTIN_TASKS } from '../registry/builtins.js';
import type { AnyTask } from '../registry/define-task.js';
import type { TaskStub } from '../registry/task-stubs.js';
import { Registry } from '../registry/registry.js';
import type { TaskEvents } from '../worker/events.js';
import { Worker } from '../worker/worker.js';
import { LamportClock } from '../control/clock.js';
import { EventDispatcher, eventExchange } from '../control/events.js';
import { Pidbox } from '../control/pidbox.js';
import { mingle } from '../control/mingle.js';
import { refusal } from '../control/policy.js';
import { celeryConf } from '../config/celery-conf.js';
import { WORKER_SETTINGS } from './worker-settings.js';
import { coerceError } from '../errors.js';
import { TaskMetrics, fanOut, startHttp } from '../control/http.js';
import type { Server } from 'node:http';
import { DelayCanary } from '../control/delay-canary.js';
import { tracing } from '../tracing/tracing.js';
import { Autoscaler } from '../control/autoscale.js';
import { Recycler } from '../control/recycle.js';
import { purgeQueues } from '../control/purge.js';
import { overlayTask } from './annotations.js';
import { noEvents } from '../worker/events.js';
import type { WorkerHooks } from './hooks.js';

export type { WorkerConfig } from './worker-config.js';

export interface AppSpec<D> {
  config: WorkerConfig;
  tasks: ReadonlyArray<AnyTask<D>>;
  /** Tasks registered by name and queue, their code loaded when a message first names one (task-stubs.ts). */
  taskStubs?: ReadonlyArray<TaskStub<D>>;
  deps: D;
  logger: Logger;
  /** Queues consumed when `-Q` is not given, and where tasks without a declared queue are sent. */
  defaultQueue: string;
  events?: TaskEvents;
  broker?: Broker;
  /** The configuration `celery inspect conf` shows (Celery's names, secrets censored); default: the worker's settings. */
  conf?: (withDefaults: boolean) => Record<string, unknown>;
  /** Called after a `shutdown` control command stopped the worker (the process should exit). */
  onRemoteShutdown?: () => void;
  /**
   * Called after the worker stopped to be replaced (`--max-tasks-per-child`, `--max-memory-per-child`,
   * `pool_restart`): the process should exit with RECYCLE_EXIT_CODE. Without it, nothing recycles.
   */
  onRecycled?: (reason: string) => void;
  /**
   * Called after the worker gave up reconnecting (`broker_connection_max_retries`) and stopped: the process should
   * exit non-zero. Without it the worker stops all the same.
   */
  onBrokerGaveUp?: () => void;
  /** Lifecycle hooks of code that embeds the worker (hooks.ts): task prerun/postrun/success/failure/retry, worker ready/shutdown. */
  hooks?: WorkerHooks;
}

/** The parts a worker process is made of (`createWorker` assembles them). */
export interface WorkerAppParts<D> {
  worker: Worker<D>;
  broker: Broker;
  pidbox: Pidbox;
  events: EventDispatcher;
  /** Only when /metrics is served (an HTTP port is set): nobody could read them otherwise. */
  metrics: TaskMetrics | undefined;
  logger: Logger;
  /** Where /healthz, /readyz and /metrics are served, with `metrics`. */
  http: { port: number; host?: string };
  /** Only with /metrics and /healthz: they are where a late delay level is told. */
  canary?: DelayCanary;
  deadLetterSuffix?: string;
  /** Celery's mingle, before the worker consumes: revoked ids and clock learnt from the running workers. */
  sync?: () => Promise<unknown>;
  /** Worker heartbeats every 2 s unless set; null: none (`--without-heartbeat`). */
  heartbeat?: { intervalSeconds: number } | null;
  /** `--purge`: the queues emptied before they are consumed. */
  purge?: () => Promise<void>;
  autoscaler?: Autoscaler;
  /** Lifecycle hooks of code that embeds the worker: worker ready and shutdown are told from here. */
  hooks?: WorkerHooks;
}

/**
 * A running worker process: the worker, its remote control and its events. `start` connects and starts
 * them; `shutdown`/`coldShutdown` announce worker-offline and stop them (the `Stoppable` of signals.ts).
 */
export class WorkerApp<D> {
  readonly worker: Worker<D>;
  readonly broker: Broker;
  readonly pidbox: Pidbox;
  readonly events: EventDispatcher;
  readonly metrics: TaskMetrics | undefined;
  readonly canary: DelayCanary | undefined;
  private http: Server | undefined;
  private startedResolve: () => void = () => undefined;
  private stopping = false;
  private gaveUpResolve: () => void = () => undefined;
  private readonly gaveUp = new Promise<void>((r) => (this.gaveUpResolve = r));
  /** Settles when `start` has: a shutdown asked for while starting (a recycle) waits for it. */
  readonly started = new Promise<void>((r) => (this.startedResolve = r));

  constructor(private readonly parts: WorkerAppParts<D>) {
    this.worker = parts.worker;
    this.broker = parts.broker;
    this.pidbox = parts.pidbox;
    this.events = parts.events;
    this.metrics = parts.metrics;
    this.canary = parts.canary;
  }

  async start(): Promise<void> {
    try {
      // A broker given up on may leave its connect waiting for ever (a Redis client's queued command): not waited for.
      await Promise.race([this.startParts(), this.gaveUp]);
    } catch (err) {
      // A shutdown (a signal, a recycle) that came while starting closed the broker under the start: not a failure.
      if (!this.stopping) throw err;
    } finally {
      this.startedResolve();
    }
  }

  private async startParts(): Promise<void> {
    // Liveness answers from the start; readiness only once we consume.
    if (this.metrics) {
      const { http, deadLetterSuffix } = this.parts;
      this.http = startHttp(this.broker, this.worker, this.metrics, this.parts.logger, {
        port: http.port,
        host: http.host ?? '0.0.0.0',
        ...(this.canary ? { canary: this.canary } : {}),
        ...(deadLetterSuffix !== undefined ? { deadLetterSuffix } : {}),
      });
    }
    await this.broker.connect();
    await this.broker.declareExchange(eventExchange);
    await this.parts.sync?.();
    await this.parts.purge?.();
    if (this.stopping) return;
    await this.worker.start();
    if (this.stopping) return;
    await this.pidbox.start();
    if (this.stopping) return;
    const beat = this.parts.heartbeat === undefined ? { intervalSeconds: 2 } : this.parts.heartbeat;
    if (beat) this.events.startHeartbeat(beat.intervalSeconds);
    this.parts.autoscaler?.start();
    this.canary?.start();
    // Celery's "<node> ready.": from here remote control is heard too. The worker's own "running" comes earlier,
    // when its queues are consumed, and a broadcast sent between the two reaches no pidbox queue.
    this.parts.logger.info(`worker ${this.worker.nodeName} ready`);
    this.parts.hooks?.emit('workerReady', { nodeName: this.worker.nodeName });
  }

  private async quiesce(): Promise<void> {
    this.parts.autoscaler?.stop();
    await this.canary?.stop();
    this.events.stopHeartbeat();
    await this.pidbox.stop();
  }

  private closeHttp(): void {
    this.http?.close();
    this.http?.closeAllConnections();
  }

  /**
   * The broker cannot be reached (`broker_connection_max_retries`): it is closed first, so that no attempt follows
   * and a start still connecting ends, then the worker stops as in a warm shutdown.
   */
  async giveUp(): Promise<void> {
    this.stopping = true;
    this.gaveUpResolve();
    await this.broker.close().catch(() => undefined);
    await this.shutdown();
  }

  async shutdown(): Promise<void> {
    this.stopping = true;
    await this.quiesce();
    await this.worker.shutdown();
    this.closeHttp();
    this.stopped();
  }

  async coldShutdown(): Promise<void> {
    this.stopping = true;
    await this.quiesce();
    await this.worker.coldShutdown();
    this.closeHttp();
    this.stopped();
  }

  private shutdownTold = false;
  /** worker_shutdown, once, however many shutdowns (a warm one turned cold) reach the end. */
  private stopped(): void {
    if (this.shutdownTold) return;
    this.shutdownTold = true;
    this.parts.hooks?.emit('workerShutdown', { nodeName: this.worker.nodeName });
  }
}

export function createWorker<D>(spec: AppSpec<D>): {
  worker: Worker<D>;
  broker: Broker;
  registry: Registry<D>;
  app: WorkerApp<D>;
} {
  const { logger } = spec;
  const compiled = compileWorkerConfig(spec.config, { defaultQueue: spec.defaultQueue });
  const { nodeName } = compiled;
  const broker =
    spec.broker ??
    createBroker({
      url: compiled.broker.url,
      logger,
      heartbeatSeconds: compiled.broker.heartbeatSeconds,
      connectionName: compiled.broker.connectionName,
      redis: redisOptionsOf(spec.config.brokerTransportOptions),
      tls: compiled.broker.tls,
      connectTimeoutMs: compiled.broker.connectTimeoutMs,
      queueType: compiled.broker.queueType,
      maxBodyBytes: compiled.worker.maxBodyBytes,
    });
  const backend = createBackend(
    compiled.resultBackend.url,
    broker,
    compiled.resultBackend.expiresSeconds,
    compiled.resultBackend.tls,
  );
  const clock = new LamportClock();
  // Filled in below: the registry is built after the event sinks it is given to.
  const names: { registry?: Registry<D> } = {};
  const metrics = compiled.httpPort > 0 ? new TaskMetrics((task) => names.registry?.has(task) === true) : undefined;
  // Heartbeats report the worker's counters; the worker is built next, with the dispatcher as its events.
  const ref: { worker?: Worker<D> } = {};
  const events = new EventDispatcher(broker, nodeName, clock, logger, { taskEvents: compiled.taskEvents }, () => ({
    active: ref.worker?.active.size ?? 0,
    processed: [...(ref.worker?.processed.values() ?? [])].reduce((a, b) => a + b, 0),
  }));
  const overlaid = {
    annotations: spec.config.taskAnnotations,
    defaultRateLimit: spec.config.taskDefaultRateLimit,
    disableRateLimits: spec.config.disableRateLimits,
  };
  const overlay = (task: AnyTask<D>) => overlayTask(task, overlaid);
  const registry = new Registry<D>(
    [...(BUILTIN_TASKS as ReadonlyArray<AnyTask<D>>), ...spec.tasks.map(overlay)],
    spec.taskStubs ?? [],
    overlay,
  );
  names.registry = registry;
  const onRecycled = spec.onRecycled;
  // Set once the app exists: a recycle stops the intake at once, then shuts the app down warm.
  const recycleRef: { go?: (reason: string) => void } = {};
  const recycler = onRecycled ? new Recycler(compiled.recycle, (reason) => recycleRef.go?.(reason), logger) : undefined;
  const sinks = [spec.events ?? (metrics ? fanOut(events, metrics) : events)];
  if (recycler?.enabled) sinks.push({ ...noEvents, ...recycler.events });
  if (spec.hooks) sinks.push(spec.hooks.taskEvents(logger));
  const worker = new Worker<D>(
    // With tracing on, the worker's publishes carry the run's trace context; nothing else changes.
    tracing()?.broker(broker) ?? broker,
    backend,
    registry,
    spec.deps,
    logger,
    compiled.worker,
    sinks.length === 1 ? sinks[0] : fanOut(...sinks),
  );
  ref.worker = worker;
  const autoscaler = compiled.autoscale ? new Autoscaler(worker, { ...compiled.autoscale }, logger) : undefined;
  const pidbox = new Pidbox(broker, worker, clock, events, logger, {
    nodeName,
    conf: spec.conf ?? ((withDefaults) => celeryConf(WORKER_SETTINGS, spec.config, withDefaults)),
    brokerUrl: compiled.broker.url,
    control: compiled.control,
    onShutdown: () => void app.shutdown().then(() => spec.onRemoteShutdown?.()),
    pool: {
      ...(autoscaler ? { autoscaler } : {}),
      restart: recycler && compiled.poolRestarts ? () => void recycler.request('pool_restart by remote control') : null,
    },
  });
  const canary =
    metrics && compiled.delayCanary && broker.capabilities.nativeDelay
      ? new DelayCanary(broker, logger, compiled.delayCanary)
      : undefined;
  const sync = async () => {
    if (!compiled.mingle) return;
    // The state file first, as Celery's Persistence step precedes mingle: its revokes go out with our hello.
    worker.revoked.load();
    try {
      // Revokes learnt from others are revokes by broker message: not taken where the control policy refuses `revoke`.
      const learn = refusal(compiled.control, 'revoke') === null;
      await mingle(
        broker,
        clock,
        nodeName,
        { revokedEntries: () => worker.revoked.entries(), learnRevoked: (e) => (learn ? worker.learnRevoked(e) : 0) },
        logger,
      );
    } catch (err) {
      // Celery logs a failed sync and starts anyway: the worker still serves, it only knows fewer revokes.
      logger.error(`mingle: sync failed: ${coerceError(err).message}`);
    }
  };
  const app = new WorkerApp({
    worker,
    broker,
    pidbox,
    events,
    metrics,
    logger,
    http: { port: compiled.httpPort, host: compiled.httpHost },
    ...(canary ? { canary } : {}),
    deadLetterSuffix: compiled.worker.deadLetterSuffix,
    sync,
    heartbeat: compiled.heartbeat,
    ...(compiled.purge
      ? { purge: () => purgeQueues(broker, compiled.worker.queues, logger).then(() => undefined) }
      : {}),
    ...(autoscaler ? { autoscaler } : {}),
    ...(spec.hooks ? { hooks: spec.hooks } : {}),
  });
  const maxRetries = compiled.brokerConnectionMaxRetries;
  if (maxRetries !== null) {
    let gaveUp = false;
    broker.on('connectFailed', (failures, err) => {
      // Celery's count (kombu `retry_over_time`): the first attempt, then `max_retries` retries.
      if (gaveUp || failures <= maxRetries) return;
      gaveUp = true;
      logger.error(
        `broker: giving up after ${failures} failed connection attempts in a row (broker_connection_max_retries ${maxRetries}): ${err.message}`,
      );
      void app.giveUp().then(() => spec.onBrokerGaveUp?.());
    });
  }
  recycleRef.go = (reason) => {
    // No task starts after this one: the slots close now, before the shutdown's first await.
    worker.resize(0);
    void app.started.then(() => app.shutdown()).then(() => onRecycled?.(reason));
  };
  return { worker, broker, registry, app };
}
