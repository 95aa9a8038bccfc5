/**
 * A worker assembled in-process on the in-memory broker (memory-broker.ts), with no dependencies and, unless a test
 * gives one, no logs: what the unit tests of the worker's pump, holding, settling and hooks start.
 */
import * as z from 'zod';
import { type AppSpec, createWorker } from '../../lib/app/app.js';
import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';
import { loadConfig } from '../../lib/config/settings.js';
import { PythonException } from '../../lib/errors.js';
import { nullLogger } from '../../lib/logger.js';
import { defineTask } from '../../lib/registry/define-task.js';

export function memoryWorker(
  spec: Omit<AppSpec<object>, 'deps' | 'logger'> & Partial<Pick<AppSpec<object>, 'logger'>>,
) {
  return createWorker<object>({ deps: {}, logger: nullLogger(), ...spec });
}

/** The worker's settings for a test on `queue`: no result backend, and `env` (settings by Celery's or our names). */
export const memoryConfig = (queue: string, env: Record<string, string>) =>
  loadConfig(WORKER_SETTINGS, { SMARTER_WORKER_QUEUES: queue, CELERY_RESULT_BACKEND: 'disabled', ...env }).values;

/** A task of `queue` that takes no arguments and always fails, raising Python's ValueError(`message`). */
export const failingTask = (name: string, queue: string, message: string) =>
  defineTask({
    name,
    queue,
    params: z.object({}),
    run: () => {
      throw new PythonException('ValueError', 'builtins', message);
    },
  });
