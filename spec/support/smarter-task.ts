/** Smarter's tasks as Smarter's defaults build them, found by their registered names. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, SmarterTaskSettings } from '../../tasks/env/task-env.js';
import { smarterTasks } from '../../tasks/index.js';

type Defaulted = 'operationalQueue' | 'infrastructureQueue' | 'maxRetries' | 'retryBackoff';

/** A finder of Smarter's tasks on Smarter's two queues, 3 retries with backoff, and `settings` over that. */
export function smarterTaskFinder(
  settings: Omit<SmarterTaskSettings, Defaulted> = {},
): (name: string) => AnyTask<SmarterDeps> {
  const tasks = smarterTasks({
    operationalQueue: 'default_celery_task_queue',
    infrastructureQueue: 'infrastructure_celery_task_queue',
    maxRetries: 3,
    retryBackoff: true,
    ...settings,
  });
  return (name) => {
    const task = tasks.find((t) => t.name === name);
    if (!task) throw new Error(`no task registered as ${name}`);
    return task;
  };
}
