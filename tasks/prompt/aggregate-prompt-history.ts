/** `aggregate_prompt_history`: a no-op in Smarter too (it only logs); kept so Beat's entry has a consumer. */
import { periodicTask } from '../env/periodic-task.js';
import type { TaskEnv } from '../env/task-env.js';

export const aggregatePromptHistory = (env: TaskEnv) =>
  periodicTask<null>({
    name: 'smarter.apps.prompt.tasks.aggregate_prompt_history',
    queue: env.operationalQueue,
    retry: env.autoretry,
    run(ctx) {
      ctx.logger.info('aggregate_prompt_history: nothing to aggregate (as in Smarter)');
      return null;
    },
  });
