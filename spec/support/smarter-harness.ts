/** A worker of all Smarter's tasks, configured as alpha's infrastructure worker, in the test's process. */
import type { SmarterDeps } from '../../tasks/env/task-env.js';
import { smarterTasks } from '../../tasks/index.js';
import { alphaSettings } from './alpha-settings.js';
import { REDIS_URL, uniqueName } from './amqp.js';
import { type Harness, startWorker } from './harness.js';

/**
 * Consumes a queue of its own as alpha's infrastructure queue, its checks 100 times quicker than Smarter's (a
 * check's 30 s wait takes 0.3 s), with `deps` and results in Redis.
 */
export function startInfrastructureWorker(deps: SmarterDeps): Promise<Harness> {
  const queue = uniqueName('infra');
  const settings = {
    ...alphaSettings({ operationalQueue: uniqueName('op'), infrastructureQueue: queue }),
    checkTimeScale: 0.01,
  };
  return startWorker({ queue, tasks: () => smarterTasks(settings), deps, env: { CELERY_RESULT_BACKEND: REDIS_URL } });
}
