/**
 * The worker's HTTP endpoint, for Kubernetes probes and Prometheus (not Celery's; Celery has none):
 *   /healthz  the process is alive and its event loop is not stalled (liveness); it names the errors it kept
 *             running through (a task's, or no task's), which do not fail it
 *   /readyz   connected to the broker and consuming (readiness)
 *   /metrics  Prometheus text format (prom-client)
 * None of them waits on the broker: a broker that stops reading (a resource alarm, a stalled link) must not
 * leave a probe or a scrape without an answer. What needs a broker call is refreshed beside the scrape.
 */
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Broker } from '../broker/broker.js';
import type { Logger } from '../logger.js';
import type { Counter, Histogram } from 'prom-client';
import type { TaskMessage } from '../protocol/types.js';
import type { TaskEvents } from '../worker/events.js';
import type { WorkerControl } from '../worker/control.js';
import { CONTAINED_KINDS, type ContainedKind, containedErrors } from '../worker/run/containment.js';
import { promClient } from './prom-client.js';
import { readOnly } from './read-only.js';
import { StallWatch, healthOf } from './stall-watch.js';
import type { DelayCanary } from './delay-canary.js';

/** The label of every task name this worker does not implement. */
export const NOT_REGISTERED_LABEL = '(not registered)';
/** Forwarded task names beyond the first `MAX_FORWARDED_LABELS` share this label. */
export const OTHER_LABEL = '(other)';
const MAX_FORWARDED_LABELS = 1000;

/** Task outcomes and runtimes as Prometheus metrics; plugged in beside the Celery event dispatcher. */
export class TaskMetrics implements TaskEvents {
  /**
   * `known` tells the registered names. Any other name is one a publisher chose: with a label of its own
   * each, anyone who can publish could grow the worker's memory and /metrics without bound.
   */
  constructor(private readonly known: (task: string) => boolean = () => true) {}
  private readonly forwardedNames = new Set<string>();
  private label(task: string): string {
    return this.known(task) ? task : NOT_REGISTERED_LABEL;
  }
  private readonly client = promClient();
  readonly registry = new this.client.Registry();
  private readonly tasks = new this.client.Counter({
    name: 'smarter_worker_tasks_total',
    help: 'Tasks by name and outcome',
    labelNames: ['task', 'outcome'],
    registers: [this.registry],
  });
  private readonly runtime = new this.client.Histogram({
    name: 'smarter_worker_task_runtime_seconds',
    help: 'Task run time',
    labelNames: ['task'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600],
    registers: [this.registry],
  });
  private readonly poison = new this.client.Counter({
    name: 'smarter_worker_poison_messages_total',
    help: 'Messages that never became a task (dead-lettered)',
    labelNames: ['queue'],
    registers: [this.registry],
  });
  private readonly forwards = new this.client.Counter({
    name: 'smarter_worker_forwarded_total',
    help: 'Messages of tasks this worker does not implement, forwarded',
    labelNames: ['task', 'to'],
    registers: [this.registry],
  });
  private readonly rejects = new this.client.Counter({
    name: 'smarter_worker_rejected_total',
    help: 'Messages rejected, requeued or not',
    labelNames: ['requeue'],
    registers: [this.registry],
  });

  /** Set by the HTTP endpoint's stall watch, to know which runs may have held the event loop. */
  onStarted: ((m: TaskMessage) => void) | undefined;

  received(): void {}
  started(m: TaskMessage): void {
    this.onStarted?.(m);
  }
  /** Label children by task label (bounded, see `label`): `labels()` validates and builds them on each call. */
  private readonly children = new Map<string, { success: Counter.Internal; runtime: Histogram.Internal<string> }>();
  succeeded(m: TaskMessage, _r: unknown, runtime: number): void {
    const task = this.label(m.task);
    let c = this.children.get(task);
    if (!c) {
      c = { success: this.tasks.labels({ task, outcome: 'success' }), runtime: this.runtime.labels({ task }) };
      this.children.set(task, c);
    }
    c.success.inc();
    c.runtime.observe(runtime);
  }
  failed(m: TaskMessage): void {
    this.tasks.inc({ task: this.label(m.task), outcome: 'failure' });
  }
  retried(m: TaskMessage): void {
    this.tasks.inc({ task: this.label(m.task), outcome: 'retry' });
  }
  rejected(_id: string, requeue: boolean): void {
    this.rejects.inc({ requeue: String(requeue) });
  }
  revoked(): void {
    this.tasks.inc({ task: 'unknown', outcome: 'revoked' });
  }
  poisoned(queue: string): void {
    this.poison.inc({ queue });
  }
  forwarded(task: string, to: string): void {
    // By name, so a migration shows what still flows; but a publisher chooses the names: capped.
    if (!this.forwardedNames.has(task) && this.forwardedNames.size < MAX_FORWARDED_LABELS) {
      this.forwardedNames.add(task);
    }
    this.forwards.inc({ task: this.forwardedNames.has(task) ? task : OTHER_LABEL, to });
  }
}

/** Sends every task event to each of the sinks. */
export function fanOut(...sinks: TaskEvents[]): TaskEvents {
  return {
    received: (m) => sinks.forEach((s) => s.received(m)),
    started: (m) => sinks.forEach((s) => s.started(m)),
    succeeded: (m, r, t) => sinks.forEach((s) => s.succeeded(m, r, t)),
    failed: (m, e, tb) => sinks.forEach((s) => s.failed(m, e, tb)),
    retried: (m, e, tb) => sinks.forEach((s) => s.retried(m, e, tb)),
    rejected: (id, rq) => sinks.forEach((s) => s.rejected(id, rq)),
    revoked: (id, how) => sinks.forEach((s) => s.revoked(id, how)),
    poisoned: (q, r) => sinks.forEach((s) => s.poisoned(q, r)),
    forwarded: (t, to) => sinks.forEach((s) => s.forwarded?.(t, to)),
    flush: () => sinks.forEach((s) => s.flush?.()),
  };
}

const PATHS = new Set(['/healthz', '/readyz', '/metrics']);
/** How long a scrape waits for the broker's counts before it answers with the previous ones. */
const SCRAPE_WAIT_MS = 300;

export interface HttpOptions {
  port: number;
  host?: string;
  /** Event-loop delay above which /healthz fails. */
  maxLoopDelayMs?: number;
  /** A block of the event loop at least this long is logged, counted and makes /healthz "degraded". */
  stallReportMs?: number;
  /** How long /healthz says "degraded" after such a block. */
  degradedForMs?: number;
  /** Watches the delay levels (when this broker has them): its late levels make /healthz "degraded". */
  canary?: DelayCanary;
  /** The dead-letter queue of queue Q is Q + this suffix; their depths are exported. */
  deadLetterSuffix?: string;
}

export function startHttp(
  broker: Broker,
  worker: WorkerControl,
  metrics: TaskMetrics,
  logger: Logger,
  opts: HttpOptions,
): http.Server {
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  const reg = metrics.registry;
  const client = promClient();
  client.collectDefaultMetrics({ register: reg, prefix: 'smarter_worker_' });
  let reconnects = 0;
  broker.on('disconnected', () => reconnects++);
  const gauge = (name: string, help: string, get: () => number) =>
    new client.Gauge({
      name,
      help,
      registers: [reg],
      collect() {
        this.set(get());
      },
    });
  gauge('smarter_worker_in_flight', 'Tasks running now', () => worker.counters().active);
  gauge('smarter_worker_reserved', 'Tasks received and waiting for a slot', () => worker.counters().reserved);
  gauge('smarter_worker_eta_held', 'ETA messages held unacked until due', () => worker.counters().held);
  gauge('smarter_worker_prefetch', 'Prefetch count per consumer', () => worker.prefetchCount);
  gauge('smarter_worker_broker_reconnects', 'Broker connections lost since start', () => reconnects);
  gauge(
    'smarter_worker_broker_blocked',
    '1 while the broker refuses publishes (a RabbitMQ memory or disk alarm, a Redis at maxmemory); consuming goes on',
    () => (broker.blocked ? 1 : 0),
  );
  gauge(
    'smarter_worker_stale_settles',
    'Acks and rejects not sent because their channel had closed (redelivered by the broker)',
    () => broker.staleSettles,
  );
  gauge(
    'smarter_worker_dropped_stale',
    'Reserved or held messages of a closed channel dropped unrun (redelivered by the broker)',
    () => worker.counters().droppedStale,
  );
  gauge(
    'smarter_worker_dead_letter_failed_attempts',
    'Dead-letter copies that failed (each attempt)',
    () => worker.counters().deadLetterFailedAttempts,
  );
  gauge(
    'smarter_worker_dead_letter_unsent',
    'Messages left unacked because their dead-letter copy failed every attempt',
    () => worker.counters().deadLetterUnsent,
  );
  gauge(
    'smarter_worker_publishes_held',
    'Follow-ups (retries, countdowns, dead-letter copies, chain steps) the broker refused, held until it takes them',
    () => worker.counters().publishesHeld,
  );
  gauge(
    'smarter_worker_delay_offloaded',
    'Far-ETA messages moved into the delay topology since start',
    () => worker.counters().offloaded,
  );
  gauge(
    'smarter_worker_event_loop_delay_seconds',
    'Event-loop delay, p99 over the last interval',
    () => loop.percentile(99) / 1e9,
  );
  new client.Gauge({
    name: 'smarter_worker_publish_renewals',
    help: 'Stuck publish channels (nothing confirmed past a bound) renewed since start, by a new channel or a new connection',
    labelNames: ['by'],
    registers: [reg],
    collect() {
      for (const by of ['channel', 'connection'] as const) this.set({ by }, broker.publishRenewals?.[by] ?? 0);
    },
  });
  const overBudget = new client.Gauge({
    name: 'smarter_worker_over_wait_budget',
    help: 'Runs reported as waiting past their budget',
    labelNames: ['task'],
    registers: [reg],
  });
  const delayed = new client.Gauge({
    name: 'smarter_worker_delayed_messages',
    help: 'Messages waiting in each delay level',
    labelNames: ['level'],
    registers: [reg],
  });
  const isReady = () =>
    broker.connected && worker.state === 'RUNNING' && worker.queues.every((q) => broker.isConsuming(q));
  gauge('smarter_worker_ready', '1 while /readyz says ready (connected, running, consuming every queue)', () =>
    isReady() ? 1 : 0,
  );
  const queueMessages = new client.Gauge({
    name: 'smarter_worker_queue_messages',
    help: 'Messages ready in each consumed queue (not those delivered and unacked), as of the last refresh (at most one scrape old)',
    labelNames: ['queue'],
    registers: [reg],
  });
  const queueConsumers = new client.Gauge({
    name: 'smarter_worker_queue_consumers',
    help: 'Consumers (consumer tags) of each consumed queue, every worker counted, as of the last refresh; on RabbitMQ a worker may hold several, one per widening of its window',
    labelNames: ['queue'],
    registers: [reg],
  });
  const deadLetters = new client.Gauge({
    name: 'smarter_worker_dead_letter_messages',
    help: 'Messages in the dead-letter queue of each consumed queue',
    labelNames: ['queue'],
    registers: [reg],
  });
  const canary = opts.canary;
  const canaryLate = new client.Gauge({
    name: 'smarter_worker_delay_canary_late_seconds',
    help: 'How late past its bound the last canary of each watched delay level is (0: in time); set by the replica holding the canary lock',
    labelNames: ['level'],
    registers: [reg],
  });
  const canaryTransit = new client.Gauge({
    name: 'smarter_worker_delay_canary_transit_seconds',
    help: 'Send-to-arrival time of the last canary countdown of each watched delay level (bound: 2^level s)',
    labelNames: ['level'],
    registers: [reg],
  });
  gauge(
    'smarter_worker_delay_canary_holder',
    '1 while this replica holds the delay canary lock and sends the canaries',
    () => (canary?.holder ? 1 : 0),
  );
  // Counted by the process's handlers (lib/app/signals.ts); each scrape adds what was counted since the last.
  const containedSeen = new Map<ContainedKind, number>();
  new client.Counter({
    name: 'smarter_worker_contained_errors_total',
    help: "Errors no code caught that the process kept running through: a task's (it failed instead) or no task's (orphan_uncaught also stops the worker warmly)",
    labelNames: ['kind'],
    registers: [reg],
    collect() {
      for (const kind of CONTAINED_KINDS) {
        const n = containedErrors.count(kind);
        this.inc({ kind }, n - (containedSeen.get(kind) ?? 0));
        containedSeen.set(kind, n);
      }
    },
  });
  const stalls = new client.Counter({
    name: 'smarter_worker_event_loop_stalls_total',
    help: 'Times the event loop was blocked past the stall threshold',
    registers: [reg],
  });
  const lastStall = new client.Gauge({
    name: 'smarter_worker_event_loop_last_stall_seconds',
    help: 'How long the last stall blocked the event loop',
    registers: [reg],
  });
  // Whatever held the loop ran between two ticks: a run active at the previous tick, or one started since.
  let suspects = new Set<string>();
  const label = (m: TaskMessage) => `${m.task}[${m.id}]`;
  metrics.onStarted = (m) => suspects.add(label(m));
  const watch = new StallWatch({
    reportMs: opts.stallReportMs ?? 1000,
    onStall: ({ blockedMs }) => {
      stalls.inc();
      lastStall.set(blockedMs / 1000);
      const tasks = [...suspects].slice(0, 20);
      logger.warn(
        `event loop blocked for ${blockedMs} ms; tasks that ran meanwhile: ${tasks.length > 0 ? tasks.join(', ') : 'none'}`,
        { blocked_ms: blockedMs, tasks },
      );
    },
    onTick: () => {
      suspects = new Set(worker.activeRuns().map((r) => label(r.msg)));
    },
  });
  watch.start();

  // The broker's counts, read beside the scrape: one read at a time, and a scrape waits for it only briefly,
  // then answers with the last counts (a broker that stops reading never holds the answer).
  let reading: Promise<void> | undefined;
  const readBrokerCounts = async (): Promise<void> => {
    for (const l of await broker.delayedStats().catch(() => [])) {
      delayed.set({ level: String(l.level) }, l.messages);
    }
    for (const queue of worker.queues) {
      const q = await broker.inspectQueue(queue).catch(() => null);
      if (q) {
        queueMessages.set({ queue }, q.messageCount);
        queueConsumers.set({ queue }, q.consumerCount);
      }
      const dl = await broker.inspectQueue(queue + (opts.deadLetterSuffix ?? '.dead_letter')).catch(() => null);
      deadLetters.set({ queue }, dl?.messageCount ?? 0);
    }
  };
  const brokerCounts = async (): Promise<void> => {
    if (!reading && broker.connected) {
      reading = readBrokerCounts().finally(() => (reading = undefined));
    }
    if (!reading) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([reading, new Promise<void>((r) => (timer = setTimeout(r, SCRAPE_WAIT_MS)))]);
    clearTimeout(timer);
  };
  const blockedLine = (): string => {
    const b = broker.blocked;
    return b ? `broker blocked publishing for ${Math.round((Date.now() - b.since) / 1000)} s (${b.reason})` : '';
  };

  const server = http.createServer((req, res) => {
    const request = readOnly(req, res, PATHS);
    if (!request) return;
    const { path, send } = request;
    if (path === '/healthz') {
      const maxDelayMs = loop.max / 1e6;
      loop.reset();
      const lateDelayLevels = canary?.lateLevels().map((l) => l.level) ?? [];
      const health = healthOf({
        maxDelayMs,
        livenessMs: opts.maxLoopDelayMs ?? 5000,
        lastStall: watch.lastStall,
        now: Date.now(),
        degradedForMs: opts.degradedForMs ?? 60_000,
        lateDelayLevels,
        contained: containedErrors.summary(),
      });
      // A broker's alarm is not this process's fault: a restart would not end it (and would drop what waits to
      // be published), so the code stays what the process's own health says.
      const blocked = blockedLine();
      send(health.code, blocked ? `${health.body.trimEnd()}; ${blocked}\n` : health.body);
    } else if (path === '/readyz') {
      const idle = worker.queues.filter((q) => !broker.isConsuming(q));
      const ready = isReady();
      const why = idle.length > 0 && broker.connected ? `, not consuming ${idle.join(', ')}` : '';
      // Blocked but consuming stays ready: the alarm is the broker's and hits every replica at once, so a 503
      // would mark them all unready (a rollout stalls, a PodDisruptionBudget sees none available) while they
      // still run what publishes nothing.
      const blocked = blockedLine();
      send(
        ready ? 200 : 503,
        (ready
          ? 'ready'
          : `not ready: broker ${broker.connected ? 'connected' : 'disconnected'}, worker ${worker.state}${why}`) +
          (blocked ? `; ${blocked}\n` : '\n'),
      );
    } else if (path === '/metrics') {
      void (async () => {
        for (const [task, n] of worker.counters().overWaitBudget) overBudget.set({ task }, n);
        await brokerCounts();
        if (canary) {
          canary.checkOverdue();
          const late = new Map(canary.lateLevels().map((l) => [l.level, l.lateMs]));
          for (const level of canary.levels) {
            canaryLate.set({ level: String(level) }, (late.get(level) ?? 0) / 1000);
            const t = canary.lastTransitMs.get(level);
            if (t !== undefined) canaryTransit.set({ level: String(level) }, t / 1000);
          }
        }
        send(200, await reg.metrics(), reg.contentType);
      })().catch(() => send(500, 'metrics failed\n'));
    }
  });
  const host = opts.host ?? '0.0.0.0';
  server.listen(opts.port, host, () =>
    logger.info(`health and metrics on ${host}:${opts.port} (/healthz, /readyz, /metrics)`),
  );
  server.on('close', () => {
    loop.disable();
    watch.stop();
    metrics.onStarted = undefined;
  });
  return server;
}
