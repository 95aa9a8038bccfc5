/** Smarter's `guardrail` app: `smarter.apps.guardrail.tasks.*`. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { purgeGuardrailEvents } from './purge-guardrail-events.js';

export const guardrailTasks = (env: TaskEnv): AnyTask<SmarterDeps>[] => [purgeGuardrailEvents(env)];
