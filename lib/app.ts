/**
 * Assembles a worker process from resolved settings and an application's task list: broker, result
 * backend, registry (Celery's built-ins included), worker. Applications (tasks/main.ts) add their tasks
 * and clients; nothing here knows which application it runs.
 */
import type { ResultBackend } from './backend/backend.js';
import { DisabledBackend } from './backend/backend.js';
import { RedisBackend } from './backend/redis-backend.js';
import { RpcBackend } from './backend/rpc-backend.js';
import { AmqpBroker } from './broker/amqp-broker.js';
import type { Broker } from './broker/broker.js';
import type { ValuesOf } from './config/settings.js';
import { type WorkerSettings, expandNodeName } from './config/worker-settings.js';
import type { Logger } from './logger.js';
import { BUILTIN_TASKS } from './registry/builtins.js';
import type { AnyTask } from './registry/define-task.js';
import { Registry } from './registry/registry.js';
import type { TaskEvents } from './worker/events.js';
import { Worker } from './worker/worker.js';

export type WorkerConfig = ValuesOf<WorkerSettings>;

export function createBackend(url: string, broker: Broker, expires: number | null): ResultBackend {
  if (url === '') return new DisabledBackend();
  if (url.startsWith('rpc://')) return new RpcBackend(broker);
  return new RedisBackend(url, expires);
}

export interface AppSpec<D> {
  config: WorkerConfig;
  tasks: ReadonlyArray<AnyTask<D>>;
  deps: D;
  logger: Logger;
  /** Queues consumed when `-Q` is not given, and where tasks without a declared queue are sent. */
  defaultQueue: string;
  events?: TaskEvents;
  broker?: Broker;
}

export function createWorker<D>(spec: AppSpec<D>): { worker: Worker<D>; broker: Broker; registry: Registry<D> } {
  const { config, logger } = spec;
  const nodeName = expandNodeName(config.hostname);
  const broker =
    spec.broker ??
    new AmqpBroker({ url: config.brokerUrl, logger, heartbeatSeconds: config.brokerHeartbeat, connectionName: nodeName });
  const backend = createBackend(config.resultBackend, broker, config.resultExpires);
  const registry = new Registry<D>([...(BUILTIN_TASKS as ReadonlyArray<AnyTask<D>>), ...spec.tasks]);
  const worker = new Worker<D>(
    broker,
    backend,
    registry,
    spec.deps,
    logger,
    {
      nodeName,
      queues: config.queues.length > 0 ? config.queues : [spec.defaultQueue],
      concurrency: config.concurrency,
      prefetchMultiplier: config.prefetchMultiplier,
      acceptContent: config.acceptContent,
      defaultQueue: spec.defaultQueue,
      deadLetterSuffix: config.deadLetterSuffix,
      shutdownGraceMs: config.shutdownGrace * 1000,
      delayedDelivery: config.delayedDelivery ? { queueType: config.delayQueueType, holdMaxMs: config.etaHoldMax * 1000 } : null,
      defaults: {
        acksLate: config.taskAcksLate,
        acksOnFailureOrTimeout: config.taskAcksOnFailureOrTimeout,
        trackStarted: config.taskTrackStarted,
        ignoreResult: config.taskIgnoreResult,
        timeLimit: config.taskTimeLimit,
        softTimeLimit: config.taskSoftTimeLimit,
        waitBudget: config.waitBudget,
      },
    },
    spec.events,
  );
  return { worker, broker, registry };
}
