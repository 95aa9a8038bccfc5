/**
 * Signals and the process's own errors, handled in one place.
 *
 * Signals, as Celery: the first SIGTERM or SIGINT starts a warm shutdown; a second SIGINT, or SIGQUIT, makes it
 * cold (running tasks are cancelled and their messages put back).
 *
 * Errors no code caught, reported to the process: Celery's prefork pool loses one task when a child dies, never the
 * worker; here the tasks share one process, so no task may take it down. One that belongs to a run (its scope,
 * lib/worker/run/containment.ts) fails that run through the normal outcome path: result stored, retried if its policy
 * says so, the message settled as any failure is. One that belongs to no task is logged with its stack and
 * counted; an unhandled rejection leaves the worker running, an uncaught exception stops it warmly (no more
 * messages; running tasks finish within the grace and are settled) and the process exits non-zero.
 *
 * Returns a function that removes the handlers, for tests.
 */
import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { type ContainedKind, containedErrors, currentRun } from '../worker/run/containment.js';

export interface Stoppable {
  shutdown(): Promise<void>;
  coldShutdown(): Promise<void>;
}

export function installSignalHandlers(target: Stoppable, logger: Logger, onDone: (code: number) => void): () => void {
  let warm = false;
  let cold = false;
  let crashed = false;
  // Both shutdowns settle when the worker stops; the exit code says whether it had to turn cold, or was forced.
  const finish = (p: Promise<void>) =>
    p.then(
      () => onDone(cold || crashed ? 1 : 0),
      (err: unknown) => {
        logger.error('shutdown failed', { error: String(err) });
        onDone(1);
      },
    );
  const onWarm = (signal: NodeJS.Signals) => {
    if (warm) {
      if (signal === 'SIGINT') onCold(signal);
      return;
    }
    warm = true;
    logger.warn(`${signal}: warm shutdown (running tasks finish; send SIGINT again or SIGQUIT to cancel them)`);
    void finish(target.shutdown());
  };
  const onCold = (signal: NodeJS.Signals) => {
    logger.warn(`${signal}: cold shutdown (running tasks are cancelled and requeued)`);
    warm = true;
    cold = true;
    void finish(target.coldShutdown());
  };

  /** True when the error was a run's (that run ends failed, or had already ended); false when it is no task's. */
  const contained = (err: Error, kind: 'uncaught' | 'rejection'): boolean => {
    const run = currentRun();
    if (!run) return false;
    containedErrors.add(`task_${kind}` as ContainedKind);
    const failed = run.fail(err);
    logger.error(
      failed
        ? `${kind === 'uncaught' ? 'an uncaught exception' : 'an unhandled rejection'} of task ${run.task}[${run.id}]: the task fails`
        : `${kind === 'uncaught' ? 'an uncaught exception' : 'an unhandled rejection'} of task ${run.task}[${run.id}], after it ended`,
      { task: run.task, id: run.id, kind: `task_${kind}`, error: err.stack ?? String(err) },
    );
    return true;
  };
  // An error raised while an error is being reported (its log line failing, say) is counted, never reported again:
  // reporting it would raise it again, and the handler would never return to the event loop.
  let reporting = false;
  const onUncaught = (e: unknown) => {
    const err = coerceError(e);
    if (reporting) {
      containedErrors.add('orphan_uncaught');
      crashed = true;
      return;
    }
    reporting = true;
    try {
      if (contained(err, 'uncaught')) return;
      containedErrors.add('orphan_uncaught');
      logger.error('an uncaught exception outside any task: warm shutdown, exit code 1', {
        kind: 'orphan_uncaught',
        error: err.stack ?? String(err),
      });
    } finally {
      reporting = false;
    }
    crashed = true;
    if (warm) return;
    warm = true;
    void finish(target.shutdown());
  };
  const onRejection = (reason: unknown) => {
    const err = coerceError(reason);
    if (contained(err, 'rejection')) return;
    containedErrors.add('orphan_rejection');
    logger.error('an unhandled rejection outside any task (the worker keeps running)', {
      kind: 'orphan_rejection',
      error: err.stack ?? String(err),
    });
  };

  process.on('SIGTERM', onWarm);
  process.on('SIGINT', onWarm);
  process.on('SIGQUIT', onCold);
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('SIGTERM', onWarm);
    process.off('SIGINT', onWarm);
    process.off('SIGQUIT', onCold);
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onRejection);
  };
}
