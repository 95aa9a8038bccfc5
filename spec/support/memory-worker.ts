/**
 * A worker assembled in-process on the in-memory broker (memory-broker.ts), with no dependencies and, unless a test
 * gives one, no logs: what the unit tests of the worker's pump, holding, settling and hooks start.
 */
import { type AppSpec, createWorker } from '../../lib/app/app.js';
import { nullLogger } from '../../lib/logger.js';

export function memoryWorker(
  spec: Omit<AppSpec<object>, 'deps' | 'logger'> & Partial<Pick<AppSpec<object>, 'logger'>>,
) {
  return createWorker<object>({ deps: {}, logger: nullLogger(), ...spec });
}
