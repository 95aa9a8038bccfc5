/** Smarter's `prompt` app: `smarter.apps.prompt.tasks.*`, all on the operational queue. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { aggregatePromptHistory } from './aggregate-prompt-history.js';
import { createPrompt } from './create-prompt.js';
import { createPromptHistory } from './create-prompt-history.js';
import { createPromptPluginUsage } from './create-prompt-plugin-usage.js';
import { createPromptToolCallHistory } from './create-prompt-tool-call-history.js';

export const promptTasks = (env: TaskEnv): AnyTask<SmarterDeps>[] => [
  createPromptHistory(env),
  aggregatePromptHistory(env),
  createPrompt(env),
  createPromptToolCallHistory(env),
  createPromptPluginUsage(env),
];
