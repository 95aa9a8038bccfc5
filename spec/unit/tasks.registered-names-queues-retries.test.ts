/** Smarter's tasks on the operational queue are registered under the exact names, queue and retry options of the contract. */
import { smarterTasks } from '../../tasks/index.js';

const OP = 'default_celery_task_queue';
const INFRA = 'infrastructure_celery_task_queue';
const all = smarterTasks({ operationalQueue: OP, infrastructureQueue: INFRA, maxRetries: 3, retryBackoff: true });
const tasks = all.filter((t) => t.queue === OP);

// Smarter's `@app.task` declarations (smarter/smarter/apps/<app>/tasks): registered name → whether Smarter autoretries it (AR).
const CONTRACT: Record<string, boolean> = {
  'smarter.apps.prompt.tasks.create_prompt_history': true,
  'smarter.apps.prompt.tasks.aggregate_prompt_history': true,
  'smarter.apps.prompt.tasks.create_prompt': true,
  'smarter.apps.prompt.tasks.create_prompt_tool_call_history': true,
  'smarter.apps.prompt.tasks.create_prompt_plugin_usage': true,
  'smarter.apps.plugin.tasks.create_plugin_selector_history': true,
  'smarter.apps.plugin.tasks.create_plugin_charge': true,
  'smarter.apps.account.tasks.create_charge': true,
  'smarter.apps.account.tasks.aggregate_records': true,
  'smarter.apps.account.tasks.evaluate_budget_constraints': true,
  'smarter.apps.llmclient.tasks.create_llmclient_request.create_llmclient_request': true,
  'smarter.apps.llmhost.tasks.charge_llmhost_computes': false,
  'smarter.apps.guardrail.tasks.purge_guardrail_events': false,
  'smarter.apps.vectorstore.tasks.load_vectorstore_document': false,
  'smarter.apps.vectorstore.tasks.delete_vectorstore_document': false,
  'smarter.apps.mcpclient.tasks.refresh_mcpclient': false,
  'smarter.apps.mcpclient.tasks.refresh_mcpclients': false,
  'smarter.apps.provider.tasks.verify_provider_model': true,
  'smarter.apps.provider.tasks.verify_provider': true,
};

test('every operational task of the contract is registered, once, on the operational queue', () => {
  expect(tasks.map((t) => t.name).sort()).toEqual(Object.keys(CONTRACT).sort());
  for (const t of tasks) expect([t.name, t.queue]).toEqual([t.name, OP]);
});

test.each(Object.entries(CONTRACT))(
  '%s: autoretry for every exception, 3 retries with backoff, exactly where Smarter has it',
  (name, ar) => {
    const task = tasks.find((t) => t.name === name);
    expect(task?.retry?.autoretryFor === 'all' && task.retry.maxRetries === 3 && task.retry.retryBackoff === true).toBe(
      ar,
    );
  },
);

test("the queue comes from Smarter's setting, so producers and worker read one value", () => {
  const other = smarterTasks({
    operationalQueue: 'ops_q',
    infrastructureQueue: 'infra_q',
    maxRetries: 5,
    retryBackoff: false,
  });
  expect(new Set(other.map((t) => t.queue))).toEqual(new Set(['ops_q', 'infra_q']));
  expect(other.find((t) => t.name.endsWith('create_charge'))?.retry).toMatchObject({
    maxRetries: 5,
    retryBackoff: false,
  });
});

test('exactly the tasks that INSERT a record a user depends on keep their message in the dead-letter queue when they fail for good', () => {
  const keeping = tasks
    .filter((t) => t.deadLetterOnExhaustion === true)
    .map((t) => t.name.replace('smarter.apps.', ''))
    .sort();
  expect(keeping).toEqual([
    'account.tasks.create_charge',
    'llmclient.tasks.create_llmclient_request.create_llmclient_request',
    // One hour of compute charges: a run lost to an outage is an hour never billed.
    'llmhost.tasks.charge_llmhost_computes',
    'plugin.tasks.create_plugin_selector_history',
    'prompt.tasks.create_prompt',
    'prompt.tasks.create_prompt_history',
    'prompt.tasks.create_prompt_plugin_usage',
    'prompt.tasks.create_prompt_tool_call_history',
    // What exhausts their retries is configuration (no base_url, no <NAME>_API_KEY): once fixed, the kept
    // message re-runs the verification the provider's owner is waiting on.
    'provider.tasks.verify_provider',
    'provider.tasks.verify_provider_model',
  ]);
});
