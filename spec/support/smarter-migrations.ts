/**
 * Smarter's database tables as its Django migrations make them, for the schema tests
 * (spec/integration/db-schema.*.test.ts): each table's fields, and the columns Django's MySQL backend creates for them.
 *
 * The fields below are those of Smarter's migrations, smarter/smarter/apps/<app>/migrations/<name>.py, after the
 * last one: account 0001-0003 (as of 0.14.20-alpha.3), 0004_budget_enforcement @96e51d6 and 0005_budget_unique_name
 * @860800a; prompt, plugin, secret and provider as of 0.14.20-alpha.3, with the LLMClient key named llmclient_id as
 * the llmclient app has it; llmclient 0001 @23cf9c786, 0002 @96e51d6, 0006 @b5b13d0; llmhost 0001 @96e51d6 and
 * 0002 @860800a; infrastructure 0001 @96e51d6; mcpclient 0001 @7ebe7c4 and 0002 @860800a. The vectorstore app's
 * migration for its newest models was not available: those three tables follow the models.
 */
import { INTEGRATION_APP_TABLES } from './smarter-migrations-integrations.js';

export interface MigrationFields {
  migrations: string[];
  fields: string[];
}

/** `'<column> <Django field>[ null]'`; every table also has Django's id and TimestampedModel's created_at/updated_at. */
export const SMARTER_MIGRATIONS: Record<string, MigrationFields> = {
  account_charge: {
    migrations: [
      'account/0001_initial',
      'account/0002_resourceconstraint_remove_charge_model_and_more',
      'account/0004_budget_enforcement',
    ],
    fields: [
      'charge_type CharField(20)',
      'prompt_tokens IntegerField',
      'completion_tokens IntegerField',
      'total_tokens IntegerField',
      'resource_locator CharField(255)',
      'total_cost DecimalField(18,8)',
    ],
  },
  account_aggregatedcharges: {
    migrations: ['account/0002_resourceconstraint_remove_charge_model_and_more', 'account/0004_budget_enforcement'],
    fields: [
      'year SmallIntegerField',
      'month SmallIntegerField',
      'day SmallIntegerField',
      'hour SmallIntegerField',
      'resource_locator CharField(255)',
      'charge_type CharField(20)',
      'records IntegerField',
      'prompt_tokens IntegerField',
      'completion_tokens IntegerField',
      'total_tokens IntegerField',
      'total_cost DecimalField(18,5)',
    ],
  },
  account_resourceconstraint: {
    migrations: ['account/0002_resourceconstraint_remove_charge_model_and_more', 'account/0004_budget_enforcement'],
    fields: [
      'resource_locator CharField(255)',
      'budget_id ForeignKey null',
      'exceeded_at DateTimeField null',
      'is_active BooleanField',
      'start_date DateTimeField',
      'warned_at DateTimeField null',
    ],
  },
  account_resourcelock: {
    migrations: ['account/0002_resourceconstraint_remove_charge_model_and_more', 'account/0004_budget_enforcement'],
    fields: [
      'resource_locator CharField(255)',
      'expiration_date DateTimeField null',
      'resource_constraint_id ForeignKey',
      'reason TextField',
    ],
  },
  prompt_prompt: {
    migrations: ['prompt/0001_initial'],
    fields: [
      'name CharField(255)',
      'description TextField null',
      'version CharField(255) null',
      'annotations JSONField null',
      'session_key CharField(255)',
      'ip_address GenericIPAddressField',
      'user_agent CharField(255)',
      'url URLField(200)',
      'llmclient_id ForeignKey',
      'user_profile_id ForeignKey',
    ],
  },
  prompt_prompthistory: {
    migrations: ['prompt/0001_initial'],
    fields: ['request JSONField null', 'response JSONField null', 'messages JSONField null', 'prompt_id ForeignKey'],
  },
  prompt_prompttoolcall: {
    migrations: ['prompt/0001_initial'],
    fields: [
      'function_name CharField(255) null',
      'function_args CharField(255) null',
      'request JSONField null',
      'response JSONField null',
      'prompt_id ForeignKey',
      'plugin_id ForeignKey null',
    ],
  },
  prompt_promptpluginusage: {
    migrations: ['prompt/0001_initial'],
    fields: ['input_text TextField null', 'prompt_id ForeignKey', 'plugin_id ForeignKey'],
  },
  plugin_pluginselectorhistory: {
    migrations: ['plugin/0001_initial'],
    fields: [
      'search_term CharField(255) null',
      'messages JSONField null',
      'session_key CharField(255) null',
      'plugin_selector_id ForeignKey',
    ],
  },
  llmclient_llmclientrequests: {
    migrations: ['llmclient/0001_initial', 'llmclient/0002_initial'],
    fields: [
      'request JSONField null',
      'session_key CharField(255) null',
      'is_aggregation BooleanField null',
      'llmclient_id ForeignKey',
    ],
  },
  llmclient_llmclient: {
    migrations: ['llmclient/0001_initial', 'llmclient/0002_initial'],
    fields: [
      'name CharField(255)',
      'description TextField null',
      'version CharField(255) null',
      'annotations JSONField null',
      'deployed BooleanField null',
      'provider CharField(255) null',
      'default_model CharField(255) null',
      'default_system_role TextField null',
      'default_temperature FloatField null',
      'default_max_tokens IntegerField null',
      'app_name CharField(255) null',
      'app_assistant CharField(255) null',
      'app_welcome_message CharField(255) null',
      'app_example_prompts JSONField null',
      'app_placeholder CharField(255) null',
      'app_info_url URLField(200) null',
      'app_background_image_url URLField(200) null',
      'app_logo_url URLField(200) null',
      'app_file_attachment BooleanField null',
      'dns_verification_status CharField(255) null',
      'tls_certificate_issuance_status CharField(255) null',
      'user_profile_id ForeignKey',
      'custom_domain_id ForeignKey null',
      'subdomain_id ForeignKey null',
    ],
  },
  llmclient_llmclientcustomdomain: {
    migrations: ['llmclient/0001_initial', 'llmclient/0006_llmclientcustomdomain_ownership'],
    fields: [
      'aws_hosted_zone_id CharField(255)',
      'domain_name CharField(255)',
      'name CharField(255)',
      'description TextField null',
      'version CharField(255) null',
      'annotations JSONField null',
      'user_profile_id ForeignKey',
      'verification_status CharField(32)',
      'verified_at DateTimeField null',
      'verification_message CharField(1024)',
    ],
  },
  llmclient_llmclientcustomdomaindns: {
    migrations: ['llmclient/0001_initial'],
    fields: [
      'record_name CharField(255)',
      'record_type CharField(255)',
      'record_value CharField(255)',
      'record_ttl IntegerField null',
      'custom_domain_id ForeignKey',
    ],
  },
  llmhost_llmhost: {
    migrations: ['llmhost/0001_initial', 'llmhost/0002_kubernetes_hosting'],
    fields: [
      'name CharField(255)',
      'description TextField null',
      'version CharField(255) null',
      'annotations JSONField null',
      'model_repository CharField(255)',
      'model_revision CharField(64)',
      'license CharField(100)',
      'model_architecture CharField(100)',
      'parameter_count BigIntegerField null',
      'context_window PositiveIntegerField null',
      'quantization CharField(20)',
      'embedding_dimensions PositiveIntegerField null',
      'supports_streaming BooleanField',
      'supports_function_calling BooleanField',
      'supports_vision BooleanField',
      'inference_engine CharField(20)',
      'api_format CharField(20)',
      'endpoint_url URLField(200)',
      'gpu_type CharField(50)',
      'gpu_count PositiveSmallIntegerField',
      'vram_required_gb PositiveIntegerField null',
      'status CharField(20)',
      'is_active BooleanField',
      'health_check_url URLField(200)',
      'last_health_check_at DateTimeField null',
      'last_health_ok BooleanField null',
      'cost_per_hour DecimalField(10,4) null',
      'user_profile_id ForeignKey',
      'api_key_secret_id ForeignKey null',
      'deployed_at DateTimeField null',
      'model_source CharField(20)',
      'model_task CharField(20)',
      'public_url URLField(200)',
      'ready_replicas PositiveSmallIntegerField',
      'replicas PositiveSmallIntegerField',
      'served_model_name CharField(255)',
      'spec JSONField',
      'status_message TextField',
      'supports_reasoning BooleanField',
      'compute_id ForeignKey null',
    ],
  },
  llmhost_llmhostevent: {
    migrations: ['llmhost/0002_kubernetes_hosting'],
    fields: [
      'llmhost_name CharField(255)',
      'event_type CharField(20)',
      'status CharField(20)',
      'message TextField',
      'details JSONField',
      'llmhost_id ForeignKey null',
    ],
  },
  llmhost_llmhostcompute: {
    migrations: ['llmhost/0002_kubernetes_hosting'],
    fields: [
      'name CharField(255)',
      'description TextField null',
      'version CharField(255) null',
      'annotations JSONField null',
      'spec JSONField',
      'instance_type CharField(50)',
      'cpu PositiveIntegerField',
      'memory_gb PositiveIntegerField',
      'gpu_type CharField(50)',
      'gpu_count PositiveSmallIntegerField',
      'gpu_memory_gb PositiveIntegerField',
      'max_nodes PositiveSmallIntegerField',
      'price_per_hour DecimalField(10,4) null',
      'nodegroup_status CharField(20)',
      'desired_nodes PositiveSmallIntegerField',
      'ready_nodes PositiveSmallIntegerField',
      'status_message TextField',
      'last_reconciled_at DateTimeField null',
      'user_profile_id ForeignKey',
    ],
  },
  infrastructure_infrastructureresource: {
    migrations: ['infrastructure/0001_initial'],
    fields: [
      'provider CharField(32)',
      'service CharField(32)',
      'resource_type CharField(64)',
      'resource_name CharField(255)',
      'resource_id CharField(512)',
      'billable BooleanField',
      'status CharField(16)',
      'destroyed_at DateTimeField null',
    ],
  },
  ...INTEGRATION_APP_TABLES,
};

/** The column type Django's MySQL backend creates for a field, as MariaDB's information_schema shows it. */
export function columnType(field: string): string {
  const sized = /^(CharField|URLField|EmailField|ImageField)\((\d+)\)$/.exec(field);
  if (sized) return `varchar(${sized[2]})`;
  const decimal = /^DecimalField\((\d+),(\d+)\)$/.exec(field);
  if (decimal) return `decimal(${decimal[1]},${decimal[2]})`;
  const types: Record<string, string> = {
    BigAutoField: 'bigint(20)',
    ForeignKey: 'bigint(20)',
    'ForeignKey(User)': 'int(11)',
    BigIntegerField: 'bigint(20)',
    IntegerField: 'int(11)',
    SmallIntegerField: 'smallint(6)',
    PositiveBigIntegerField: 'bigint(20) unsigned',
    PositiveIntegerField: 'int(10) unsigned',
    PositiveSmallIntegerField: 'smallint(5) unsigned',
    BooleanField: 'tinyint(1)',
    FloatField: 'double',
    DateTimeField: 'datetime(6)',
    TextField: 'longtext',
    JSONField: 'longtext',
    GenericIPAddressField: 'char(39)',
    BinaryField: 'longblob',
  };
  const type = types[field];
  if (!type) throw new Error(`no column type for ${field}`);
  return type;
}

export interface Column {
  name: string;
  field: string;
  nullable: boolean;
}

export function columnsOf(table: string): Column[] {
  const spec = SMARTER_MIGRATIONS[table];
  if (!spec) throw new Error(`no migration columns for ${table}`);
  const timestamped = ['id BigAutoField', 'created_at DateTimeField null', 'updated_at DateTimeField null'];
  return [...timestamped, ...spec.fields].map((f) => {
    const [name = '', field = '', nullable] = f.split(' ');
    return { name, field, nullable: nullable === 'null' };
  });
}
