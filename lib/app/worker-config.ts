/**
 * The worker's configuration compiled once from the resolved settings: units converted (seconds → ms),
 * the queue defaults applied, the node name expanded, and the result frozen, so nothing downstream
 * converts, defaults or changes it again.
 */
import type { DelayQueueType } from '../broker/broker.js';
import type { ControlPolicy } from '../control/policy.js';
import type { WorkerOptions } from '../worker/worker.js';
import type { ValuesOf } from '../config/settings.js';
import type { TlsSettings } from '../config/tls.js';
import { type WorkerSettings, expandNodeName } from './worker-settings.js';

export type WorkerConfig = ValuesOf<WorkerSettings>;

export interface WorkerConfiguration {
  readonly nodeName: string;
  readonly broker: {
    readonly url: string;
    readonly heartbeatSeconds: number;
    readonly connectionName: string;
    readonly tls: TlsSettings;
    readonly connectTimeoutMs: number;
    readonly queueType: DelayQueueType;
  };
  readonly resultBackend: { readonly url: string; readonly expiresSeconds: number | null; readonly tls: TlsSettings };
  readonly taskEvents: boolean;
  /** worker-online/heartbeat/offline events every `intervalSeconds`; null with `--without-heartbeat`. */
  readonly heartbeat: { readonly intervalSeconds: number } | null;
  /** Empty the consumed queues before consuming (`--purge`). */
  readonly purge: boolean;
  readonly autoscale: { readonly max: number; readonly min: number } | null;
  /** When the process is to be replaced (`--max-tasks-per-child`, `--max-memory-per-child` in KiB). */
  readonly recycle: {
    readonly maxTasks: number | null;
    readonly maxMemoryKiB: number | null;
    readonly maxAbandoned: number | null;
  };
  readonly poolRestarts: boolean;
  /** Failed connection attempts in a row after which the worker exits; null: retried forever. */
  readonly brokerConnectionMaxRetries: number | null;
  /** Celery's mingle at start (false with `--without-mingle`). */
  readonly mingle: boolean;
  readonly httpPort: number;
  readonly httpHost: string;
  readonly control: ControlPolicy;
  /** null: no canary (turned off, or no delay topology used). */
  readonly delayCanary: {
    readonly intervalMs: number;
    readonly marginMs: number;
    readonly levels: readonly number[];
  } | null;
  readonly worker: Readonly<WorkerOptions>;
}

function deepFreeze<T>(o: T): T {
  if (typeof o === 'object' && o !== null && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

export function compileWorkerConfig(
  config: WorkerConfig,
  o: { defaultQueue: string; host?: string },
): WorkerConfiguration {
  const nodeName = expandNodeName(config.hostname, o.host);
  const wanted = config.queues.length > 0 ? config.queues : [o.defaultQueue];
  const queues = wanted.filter((q) => !config.excludeQueues.includes(q));
  // autoscale: the prefetch is sized for MAX, the slots start at MIN (Celery's Autoscaler).
  const concurrency = config.autoscale?.max ?? config.concurrency;
  return deepFreeze({
    nodeName,
    broker: {
      url: config.brokerUrl,
      heartbeatSeconds: config.brokerHeartbeat,
      connectionName: nodeName,
      tls: { ...config.brokerUseSsl },
      connectTimeoutMs: config.brokerConnectionTimeout * 1000,
      queueType: config.taskDefaultQueueType,
    },
    resultBackend: {
      url: config.resultBackend,
      expiresSeconds: config.resultExpires,
      tls: { ...config.redisBackendUseSsl },
    },
    taskEvents: config.taskEvents,
    heartbeat: config.withoutHeartbeat ? null : { intervalSeconds: config.heartbeatInterval },
    purge: config.purge,
    autoscale: config.autoscale ? { ...config.autoscale } : null,
    recycle: {
      maxTasks: config.maxTasksPerChild,
      maxMemoryKiB: config.maxMemoryPerChild,
      maxAbandoned: config.maxAbandonedRuns,
    },
    poolRestarts: config.poolRestarts,
    brokerConnectionMaxRetries: config.brokerConnectionMaxRetries,
    cancelOnConnectionLoss: config.cancelOnConnectionLoss,
    mingle: !config.withoutMingle,
    httpPort: config.httpPort,
    httpHost: config.httpHost,
    control: config.control,
    delayCanary:
      config.delayCanaryInterval > 0 && config.delayedDelivery && config.delayCanaryLevels.length > 0
        ? {
            intervalMs: config.delayCanaryInterval * 1000,
            marginMs: config.delayCanaryMargin * 1000,
            levels: [...config.delayCanaryLevels],
          }
        : null,
    worker: {
      nodeName,
      queues,
      concurrency,
      ...(config.autoscale ? { initialSlots: config.autoscale.min } : {}),
      // --disable-prefetch: no message is taken that a free slot could not run now.
      prefetchMultiplier: config.disablePrefetch ? 1 : config.prefetchMultiplier,
      acceptContent: [...config.acceptContent],
      maxBodyBytes: config.maxBodySize,
      defaultQueue: o.defaultQueue,
      deadLetterSuffix: config.deadLetterSuffix,
      shutdownGraceMs: config.shutdownGrace * 1000,
      stateDb: config.stateDb || null,
      unknownTasks: config.unknownTasks,
      cancelOnConnectionLoss: config.cancelOnConnectionLoss,
      delayedDelivery: config.delayedDelivery
        ? { queueType: config.delayQueueType, holdMaxMs: config.etaHoldMax * 1000 }
        : null,
      defaults: {
        acksLate: config.taskAcksLate,
        acksOnFailureOrTimeout: config.taskAcksOnFailureOrTimeout,
        trackStarted: config.taskTrackStarted,
        ignoreResult: config.taskIgnoreResult,
        timeLimit: config.taskTimeLimit,
        softTimeLimit: config.taskSoftTimeLimit,
        waitBudget: config.waitBudget,
        resultExtended: config.resultExtended,
      },
    },
  });
}
