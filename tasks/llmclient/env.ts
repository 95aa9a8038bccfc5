/**
 * What every infrastructure task shares: its queue and retry policy, Smarter's settings, the time scale, and the
 * cloud clients (`ctx.deps.cloud`). Transient failures are retried as Smarter's `autoretry_for=(Exception,)` does;
 * what cannot change by retrying (a missing row, a bad domain, a 403, a 409) fails at once, naming what failed.
 */
import type { RetryPolicy } from '../../lib/registry/define-task.js';
import { hasCode } from '../../lib/errors.js';
import { CloudError } from '../cloud/ports.js';
import type { SmarterDeps, TaskEnv } from '../deps.js';
import { DatabaseError, DoesNotExist, LLMClientCustomDomainExists, LLMClientCustomDomainNotFound, SmarterValueError } from '../errors.js';
import { type Derived, type InfrastructureSettings, derived } from './settings.js';

export type InfraDeps = SmarterDeps;

/** The operational `TaskEnv` too, so that one environment serves an app whose tasks sit on both queues. */
export interface InfraEnv extends Derived, TaskEnv {
  queue: string;
  retry: RetryPolicy;
  settings: InfrastructureSettings;
  /** Seconds to wait for a Smarter interval, scaled by SMARTER_WORKER_CHECK_TIME_SCALE. */
  wait(seconds: number): number;
}

/** Errors that retrying cannot fix. */
export function isPermanent(err: Error): boolean {
  if (err instanceof CloudError) return err.kind !== 'Throttled' && err.kind !== 'Unavailable';
  if (err instanceof DoesNotExist || err instanceof SmarterValueError) return true;
  if (err instanceof LLMClientCustomDomainExists || err instanceof LLMClientCustomDomainNotFound) return true;
  if (err instanceof DatabaseError) return err.pyType !== 'OperationalError';
  return hasCode(err, 'TASK_ARGUMENTS_INVALID');
}

export function infraEnv(env: TaskEnv, settings: InfrastructureSettings): InfraEnv {
  const scale = settings.checkTimeScale;
  return {
    ...env,
    ...derived(settings),
    queue: env.infrastructureQueue,
    retry: { ...env.autoretry, autoretryFor: (err: Error) => !isPermanent(err) },
    settings,
    wait: (seconds) => Math.round(seconds * scale * 1000) / 1000,
  };
}
