/** Workers of all Smarter's tasks in the test's process: alpha's infrastructure worker, or the ADR-030 pair. */
import type { SmarterDeps, SmarterTaskSettings } from '../../tasks/env/task-env.js';
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

export interface SmarterWorkers {
  op: Harness;
  infra: Harness;
  stop(): Promise<void>;
}

/**
 * Smarter's two workers as ADR-030 deploys them: one consuming `settings`' operational queue, one its
 * infrastructure queue, both with `deps`, each with its own settings (`env.op`, `env.infra`).
 */
export async function startSmarterWorkers(
  settings: SmarterTaskSettings,
  deps: SmarterDeps,
  env: { op?: Record<string, string>; infra?: Record<string, string> } = {},
): Promise<SmarterWorkers> {
  const start = (queue: string, e: Record<string, string> = {}) =>
    startWorker({ queue, tasks: () => smarterTasks(settings), deps, env: e });
  const op = await start(settings.operationalQueue, env.op);
  const infra = await start(settings.infrastructureQueue, env.infra).catch(async (err: unknown) => {
    await op.stop();
    throw err;
  });
  return {
    op,
    infra,
    async stop() {
      await infra.stop();
      await op.stop();
    },
  };
}
