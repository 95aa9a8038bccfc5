/**
 * Every task Smarter registers (the `@app.task` declarations under `smarter/smarter/apps/<app>/tasks`), with the queue kind it declares. During a migration
 * Python workers still serve the tasks this worker does not implement yet; `smarter-beat check` uses this
 * catalog to know that a Beat entry names a real task and its queue, and says who serves it.
 */
export type QueueKind = 'operational' | 'infrastructure';

const P = 'smarter.apps.';
const OP: string[] = [
  'prompt.tasks.create_prompt_history',
  'prompt.tasks.aggregate_prompt_history',
  'prompt.tasks.create_prompt',
  'prompt.tasks.create_prompt_tool_call_history',
  'prompt.tasks.create_prompt_plugin_usage',
  'plugin.tasks.create_plugin_selector_history',
  'plugin.tasks.create_plugin_charge',
  'account.tasks.create_charge',
  'account.tasks.aggregate_records',
  'account.tasks.evaluate_budget_constraints',
  'llmclient.tasks.create_llmclient_request.create_llmclient_request',
  'provider.tasks.verify_provider_model',
  'provider.tasks.verify_provider',
  'llmhost.tasks.charge_llmhost_computes',
  'mcpclient.tasks.refresh_mcpclient',
  'mcpclient.tasks.refresh_mcpclients',
  'guardrail.tasks.purge_guardrail_events',
  'vectorstore.tasks.load_vectorstore_document',
  'vectorstore.tasks.delete_vectorstore_document',
];
const INFRA: string[] = [
  'llmclient.tasks.deploy_default_api.deploy_default_api',
  'llmclient.tasks.deploy_default_api.continue_default_api_deployment',
  'llmclient.tasks.verify_domain.verify_domain',
  'llmclient.tasks.verify_custom_domain.verify_custom_domain',
  'llmclient.tasks.register_custom_domain.register_custom_domain',
  'llmclient.tasks.deploy_custom_api.deploy_custom_api',
  'llmclient.tasks.create_custom_domain_dns_record.create_custom_domain_dns_record',
  'llmclient.tasks.delete_default_api.delete_default_api',
  'llmclient.tasks.destroy_domain_a_record.destroy_domain_A_record',
  // Declared on the operational queue in the last version found; it calls Route 53, so ADR-030 says infrastructure.
  'llmclient.tasks.undeploy_default_api.undeploy_default_api',
  'llmclient.tasks.verify_certificate.verify_certificate',
  'llmhost.tasks.launch_llmhost',
  'llmhost.tasks.destroy_llmhost',
  'llmhost.tasks.refresh_llmhost_status',
  'llmhost.tasks.reconcile_llmhost_compute',
  'llmhost.tasks.reconcile_llmhost_computes',
  'vectorstore.tasks.snapshot_vectorstore',
  'vectorstore.tasks.reconcile_vectorstores',
  'vectorstore.tasks.maintain_vectorstores',
  'infrastructure.tasks.sync_infrastructure_inventory',
];

export const SMARTER_CATALOG: ReadonlyMap<string, QueueKind> = new Map([
  ...OP.map((n) => [P + n, 'operational'] as const),
  ...INFRA.map((n) => [P + n, 'infrastructure'] as const),
]);
