/**
 * The one door to tracing, for the worker, Beat and the tasks' outside calls. Off by default: `tracing()` is then
 * undefined, each hook (around a run, around a broker, around a call) costs one check, and the OpenTelemetry SDK
 * is never loaded. The standard `OTEL_*` variables turn it on; `otel.ts` is imported only then.
 */
import type { Logger } from '../logger.js';
import { messagingSystem, tracingWanted } from './env.js';
import type { Tracing } from './types.js';

export type { RunEnding, SpanAttributes, Tracing } from './types.js';

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
