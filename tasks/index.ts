/**
 * The single list of Smarter's tasks this worker runs: Smarter's apps, each a folder `tasks/<app>/` whose
 * `index.ts` lists its tasks. Each task declares its queue; `smarter-beat check` and the test suite verify that
 * every Beat entry names the queue its task declares.
 */
import type { AnyTask } from '../lib/registry/define-task.js';
import { accountTasks } from './account/index.js';
import { type SmarterDeps, type SmarterTaskSettings, taskEnv } from './env/task-env.js';
import { guardrailTasks } from './guardrail/index.js';
import { infrastructureTasks } from './infrastructure/index.js';
import { llmclientTasks } from './llmclient/index.js';
import { llmhostTasks } from './llmhost/index.js';
import { mcpclientTasks } from './mcpclient/index.js';
import { pluginTasks } from './plugin/index.js';
import { promptTasks } from './prompt/index.js';
import { providerTasks } from './provider/index.js';
import { vectorstoreTasks } from './vectorstore/index.js';

export function smarterTasks(s: SmarterTaskSettings): AnyTask<SmarterDeps>[] {
  const env = taskEnv(s);
  return [
    ...promptTasks(env),
    ...pluginTasks(env),
    ...accountTasks(env),
    ...guardrailTasks(env),
    ...llmclientTasks(env),
    ...llmhostTasks(env),
    ...infrastructureTasks(env),
    ...vectorstoreTasks(env),
    ...mcpclientTasks(env),
    ...providerTasks(env),
  ];
}
