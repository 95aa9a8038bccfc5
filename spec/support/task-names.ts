/** A task's registered name, read from its definition (a name never depends on the environment it is built with). */
import type { AnyTask } from '../../lib/registry/define-task.js';
import { type TaskEnv, taskEnv } from '../../tasks/env/task-env.js';

const ANY_ENV = taskEnv({ operationalQueue: 'op', infrastructureQueue: 'infra', maxRetries: 3, retryBackoff: true });

export const nameOf = <D>(define: (env: TaskEnv) => AnyTask<D>): string => define(ANY_ENV).name;
