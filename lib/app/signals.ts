/**
 * Signal handling in one place. Celery's semantics: the first SIGTERM or SIGINT starts a warm shutdown;
 * a second SIGINT, or SIGQUIT, makes it cold (running tasks are cancelled and their messages put back).
 * Returns a function that removes the handlers, for tests.
 */
import type { Logger } from '../logger.js';

export interface Stoppable {
  shutdown(): Promise<void>;
  coldShutdown(): Promise<void>;
}

export function installSignalHandlers(target: Stoppable, logger: Logger, onDone: (code: number) => void): () => void {
  let warm = false;
  let cold = false;
  // Both shutdowns settle when the worker stops; the exit code says whether it had to turn cold.
  const finish = (p: Promise<void>) =>
    p.then(
      () => onDone(cold ? 1 : 0),
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
  process.on('SIGTERM', onWarm);
  process.on('SIGINT', onWarm);
  process.on('SIGQUIT', onCold);
  return () => {
    process.off('SIGTERM', onWarm);
    process.off('SIGINT', onWarm);
    process.off('SIGQUIT', onCold);
  };
}
