/**
 * The worker's one door to tracing. Off by default: `tracing()` is then undefined, the worker's two hooks (around
 * a run, around its broker's publishes) cost one check each, and the OpenTelemetry SDK is never loaded. The
 * standard `OTEL_*` variables turn it on; `otel.ts` is imported only then.
 */
import type { Broker } from '../broker/broker.js';
import type { Logger } from '../logger.js';
import type { TaskMessage } from '../protocol/types.js';
import { messagingSystem, tracingWanted } from './env.js';

/** How a run ended, as the worker's run reports it (`RunEnd`). */
export interface RunEnding {
  outcome: { kind: string };
  reason: string;
  /** The error a failed run raised. */
  error?: Error;
}

export interface Tracing {
  /** Runs one task inside its `process` span, a child of the trace context its message carries. */
  run<T extends RunEnding>(msg: TaskMessage, queue: string, fn: () => Promise<T>): Promise<T>;
  /** The broker, with a `publish` span around each task message it sends and that span's context in the message. */
  broker(broker: Broker): Broker;
  /** Exports what is still buffered; the last thing a process does before it exits. */
  shutdown(): Promise<void>;
}

let active: Tracing | undefined;

/** The process's tracing, or undefined when it is off. */
export function tracing(): Tracing | undefined {
  return active;
}

/**
 * Starts tracing if the environment asks for it (`OTEL_TRACES_EXPORTER=otlp`), before the worker is built and
 * before the clients of outside systems are loaded, so that their instrumentations see them load.
 */
export async function startTracing(
  env: Readonly<Record<string, string | undefined>>,
  brokerUrl: string,
  logger: Logger,
): Promise<Tracing | undefined> {
  if (active || !tracingWanted(env)) return active;
  const { startOtel } = await import('./otel.js');
  active = await startOtel({ env, system: messagingSystem(brokerUrl), logger });
  return active;
}

/** Stops tracing (tests and shutdown): what is buffered is exported first. */
export async function stopTracing(): Promise<void> {
  const t = active;
  active = undefined;
  await t?.shutdown();
}
