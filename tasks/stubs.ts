/**
 * Smarter's tasks as the worker registers them: each name of the catalog on its queue, and its app's code
 * (`tasks/<app>/index.ts`, with its schemas and cloud adapters) loaded when a message first names one of the
 * app's tasks. A worker then starts without compiling the apps it does not serve (the operational deployment
 * never loads the infrastructure tasks). `tasks/index.ts` lists the same apps eagerly, for the listings and the
 * tests; a unit test holds the two to the same tasks.
 */
import type { AnyTask } from '../lib/registry/define-task.js';
import { type TaskStub, taskStubs } from '../lib/registry/task-stubs.js';
import { SMARTER_CATALOG } from './catalog.js';
import { type SmarterDeps, type SmarterTaskSettings, type TaskEnv, taskEnv } from './env/task-env.js';

type AppTasks = (env: TaskEnv) => AnyTask<SmarterDeps>[];

const APPS: Record<string, () => Promise<AppTasks>> = {
  prompt: async () => (await import('./prompt/index.js')).promptTasks,
  plugin: async () => (await import('./plugin/index.js')).pluginTasks,
  account: async () => (await import('./account/index.js')).accountTasks,
  guardrail: async () => (await import('./guardrail/index.js')).guardrailTasks,
  llmclient: async () => (await import('./llmclient/index.js')).llmclientTasks,
  llmhost: async () => (await import('./llmhost/index.js')).llmhostTasks,
  infrastructure: async () => (await import('./infrastructure/index.js')).infrastructureTasks,
  vectorstore: async () => (await import('./vectorstore/index.js')).vectorstoreTasks,
  mcpclient: async () => (await import('./mcpclient/index.js')).mcpclientTasks,
  provider: async () => (await import('./provider/index.js')).providerTasks,
};

/** The app of a catalog name (`smarter.apps.<app>.tasks…`) and the loader of its tasks. */
function appOf(name: string): { app: string; load: () => Promise<AppTasks> } {
  const app = /^smarter\.apps\.([a-z_]+)\./.exec(name)?.[1] ?? '';
  const load = APPS[app];
  if (!load) throw new Error(`no Smarter app defines ${name}`);
  return { app, load };
}

export function smarterTaskStubs(s: SmarterTaskSettings): TaskStub<SmarterDeps>[] {
  // One environment for every app, as `smarterTasks` gives them: the apps share its derived settings.
  let env: TaskEnv | undefined;
  const byApp = new Map<string, { load: () => Promise<AppTasks>; entries: Array<{ name: string; queue: string }> }>();
  for (const [name, kind] of SMARTER_CATALOG) {
    const { app, load } = appOf(name);
    const group = byApp.get(app) ?? { load, entries: [] };
    group.entries.push({ name, queue: kind === 'operational' ? s.operationalQueue : s.infrastructureQueue });
    byApp.set(app, group);
  }
  return [...byApp.values()].flatMap(({ load, entries }) =>
    taskStubs(entries, async () => {
      const tasks = await load();
      env ??= taskEnv(s);
      return tasks(env);
    }),
  );
}
