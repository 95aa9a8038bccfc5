/**
 * The body of the test worker processes (worker-main.ts, fault-worker-main.ts, contain-worker-main.ts): configured
 * by the environment and flags as `smarter-worker` is, with its signal and error handlers, and without mingle unless
 * the test asks for it (mingle waits Celery's full second for replies at every start).
 */
import { createWorker } from '../../lib/app/app.js';
import { installSignalHandlers } from '../../lib/app/signals.js';
import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';
import { type ValuesOf, loadConfig } from '../../lib/config/settings.js';
import { type Logger, createLogger } from '../../lib/logger.js';
import type { AnyTask } from '../../lib/registry/define-task.js';

export interface WorkerProcess {
  /** The tasks, given the first queue of `-Q` (default `celery`). */
  tasks: (queue: string) => ReadonlyArray<AnyTask<unknown>>;
  /** Run before the worker is made, with its settings (tracing, for one). */
  before?: (values: ValuesOf<typeof WORKER_SETTINGS>, logger: Logger) => Promise<unknown>;
  /** How the process ends, once a signal's shutdown is over. */
  exit?: (code: number) => void;
}

export async function runWorkerProcess(p: WorkerProcess): Promise<void> {
  const { values } = loadConfig(
    WORKER_SETTINGS,
    { SMARTER_WORKER_WITHOUT_MINGLE: 'true', ...process.env },
    process.argv.slice(2),
  );
  const queue = values.queues[0] ?? 'celery';
  const logger = createLogger({ level: values.logLevel, json: true });
  await p.before?.(values, logger);
  const { app } = createWorker({
    config: values,
    tasks: p.tasks(queue),
    deps: {},
    logger,
    defaultQueue: queue,
    onRemoteShutdown: () => process.exit(0),
  });
  installSignalHandlers(app, logger, p.exit ?? ((code) => process.exit(code)));
  await app.start();
}
