/**
 * Smarter's database schema (tasks/db/schema.sql): every table the worker INSERTs into or UPDATEs has every column
 * that Smarter's Django migrations give it, NOT NULL exactly where the field has null=False, the type Django's
 * MySQL backend creates on MariaDB, and no column DEFAULT (Django keeps `default=` in Python). So, in strict SQL
 * mode (MariaDB's default), an INSERT that leaves out a NOT NULL column fails with error 1364, as it would on
 * Smarter's database.
 *
 * The fields below are those of Smarter's migrations, smarter/smarter/apps/<app>/migrations/<name>.py, after the
 * last one: account 0001-0003 (as of 0.14.20-alpha.3), 0004_budget_enforcement @96e51d6 and 0005_budget_unique_name
 * @860800a; prompt, plugin, secret and provider as of 0.14.20-alpha.3, with the LLMClient key named llmclient_id as
 * the llmclient app has it; llmclient 0001 @23cf9c786, 0002 @96e51d6, 0006 @b5b13d0; llmhost 0001 @96e51d6 and
 * 0002 @860800a; infrastructure 0001 @96e51d6; mcpclient 0001 @7ebe7c4 and 0002 @860800a. The vectorstore app's
 * migration for its newest models was not available: those three tables follow the models.
 */
import { DJANGO_TABLES, pythonDefaults } from '../../tasks/db/django-defaults.js';
import { type TestDatabase, createTestDatabase } from '../support/db.js';

/** `'<column> <Django field>[ null]'`; every table also has Django's id and TimestampedModel's created_at/updated_at. */
const TABLES: Record<string, { migrations: string[]; fields: string[] }> = {
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
  vectorstore_vectorstoremeta: {
    migrations: ['(models) vectorstore/models/vectorstore_meta.py'],
    fields: [
      'name CharField(255)',
      'description TextField null',
      'version CharField(255) null',
      'annotations JSONField null',
      'user_profile_id ForeignKey',
      'spec JSONField',
      'backend CharField(50)',
      'hosting CharField(20)',
      'connection_id ForeignKey null',
      'is_active BooleanField',
      'dimension PositiveIntegerField',
      'metric CharField(20)',
      'deletion_protection BooleanField',
      'embeddings_provider_id ForeignKey null',
      'embeddings_model CharField(255)',
      'status CharField(20)',
      'status_message TextField',
      'index_name CharField(255)',
      'endpoint_url CharField(255)',
      'api_key_secret_id ForeignKey null',
      'vector_count BigIntegerField',
      'stats JSONField',
      'deployed_at DateTimeField null',
      'last_checked_at DateTimeField null',
      'last_snapshot_at DateTimeField null',
      'last_maintenance_at DateTimeField null',
    ],
  },
  vectorstore_vectorstoredocument: {
    migrations: ['(models) vectorstore/models/document.py'],
    fields: [
      'vectorstore_id ForeignKey',
      'name CharField(255)',
      'source CharField(10)',
      'content_type CharField(100)',
      'content TextField',
      'sha256 CharField(64)',
      'size_bytes PositiveBigIntegerField',
      'metadata JSONField',
      'status CharField(10)',
      'status_message TextField',
      'chunk_count PositiveIntegerField',
      'loaded_at DateTimeField null',
    ],
  },
  vectorstore_vectorstoresnapshot: {
    migrations: ['(models) vectorstore/models/snapshot.py'],
    fields: [
      'vectorstore_id ForeignKey',
      'name CharField(255)',
      'status CharField(10)',
      'status_message TextField',
      'size_bytes PositiveBigIntegerField null',
      'vector_count BigIntegerField null',
      'scheduled BooleanField',
    ],
  },
  mcpclient_mcpclient: {
    migrations: ['mcpclient/0001_initial', 'mcpclient/0002_connection_fields_and_status'],
    fields: [
      'name CharField(255)',
      'description TextField null',
      'version CharField(255) null',
      'annotations JSONField null',
      'transport CharField(16) null',
      'endpoint_url URLField(2048) null',
      'command CharField(255) null',
      'auth_type CharField(16)',
      'allowed_tools JSONField null',
      'allowed_resources JSONField null',
      'is_active BooleanField',
      'status CharField(16)',
      'priority PositiveSmallIntegerField',
      'protocol_version CharField(16) null',
      'credentials_id ForeignKey null',
      'user_profile_id ForeignKey',
      'api_key_header CharField(64)',
      'cache_ttl PositiveIntegerField',
      'headers JSONField null',
      'include_instructions BooleanField',
      'last_connected_at DateTimeField null',
      'last_error TextField null',
      'server_name CharField(255) null',
      'server_version CharField(64) null',
      'timeout PositiveSmallIntegerField',
      'tools JSONField null',
    ],
  },
  provider_provider: {
    migrations: ['provider/0001_initial', 'provider/0002_initial'],
    fields: [
      'name CharField(255)',
      'description TextField null',
      'version CharField(255) null',
      'annotations JSONField null',
      'status CharField(32)',
      'is_default BooleanField',
      'is_active BooleanField',
      'is_verified BooleanField',
      'is_featured BooleanField',
      'is_deprecated BooleanField',
      'is_flagged BooleanField',
      'is_suspended BooleanField',
      'base_url URLField(255) null',
      'default_model CharField(255) null',
      'connectivity_test_path CharField(255) null',
      'logo ImageField(100) null',
      'website_url URLField(255) null',
      'ownership_requested EmailField(255) null',
      'contact_email EmailField(255) null',
      'contact_email_verified DateTimeField null',
      'support_email EmailField(255) null',
      'support_email_verified DateTimeField null',
      'docs_url URLField(255) null',
      'terms_of_service_url URLField(255) null',
      'privacy_policy_url URLField(255) null',
      'tos_accepted_at DateTimeField null',
      'api_key_id ForeignKey null',
      'tos_accepted_by_id ForeignKey(User) null',
      'user_profile_id ForeignKey',
    ],
  },
  provider_providermodel: {
    migrations: ['provider/0001_initial', 'provider/0002_initial'],
    fields: [
      'name CharField(255)',
      'description TextField null',
      'is_default BooleanField',
      'is_active BooleanField',
      'is_deprecated BooleanField',
      'is_flagged BooleanField',
      'is_suspended BooleanField',
      'max_completion_tokens PositiveIntegerField',
      'temperature FloatField',
      'top_p FloatField',
      'supports_text_input BooleanField',
      'supports_text_generation BooleanField',
      'supports_translation BooleanField',
      'supports_summarization BooleanField',
      'supports_streaming BooleanField',
      'supports_tools BooleanField',
      'supports_image_input BooleanField',
      'supports_audio_input BooleanField',
      'supports_embedding BooleanField',
      'supports_fine_tuning BooleanField',
      'supports_search BooleanField',
      'supports_code_interpreter BooleanField',
      'supports_image_generation BooleanField',
      'supports_audio_generation BooleanField',
      'provider_id ForeignKey',
    ],
  },
  provider_providerverification: {
    migrations: ['provider/0001_initial', 'provider/0002_initial'],
    fields: [
      'verification_type CharField(32)',
      'is_successful BooleanField',
      'error_message TextField null',
      'provider_id ForeignKey',
    ],
  },
  provider_providermodelverification: {
    migrations: ['provider/0001_initial', 'provider/0002_initial'],
    fields: [
      'verification_type CharField(32)',
      'is_successful BooleanField',
      'error_message TextField null',
      'provider_model_id ForeignKey',
    ],
  },
  secret_secret: {
    migrations: ['secret/0001_initial'],
    fields: [
      'name CharField(255)',
      'description TextField null',
      'version CharField(255) null',
      'annotations JSONField null',
      'last_accessed DateTimeField null',
      'expires_at DateTimeField null',
      'encrypted_value BinaryField',
      'user_profile_id ForeignKey',
    ],
  },
};

/** The column type Django's MySQL backend creates for a field, as MariaDB's information_schema shows it. */
function columnType(field: string): string {
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

interface Column {
  name: string;
  field: string;
  nullable: boolean;
}

function columnsOf(table: string): Column[] {
  const spec = TABLES[table];
  if (!spec) throw new Error(`no migration columns for ${table}`);
  const timestamped = ['id BigAutoField', 'created_at DateTimeField null', 'updated_at DateTimeField null'];
  return [...timestamped, ...spec.fields].map((f) => {
    const [name = '', field = '', nullable] = f.split(' ');
    return { name, field, nullable: nullable === 'null' };
  });
}

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase('schema');
});
afterAll(async () => t.drop());

test('the test database runs in strict SQL mode, as MariaDB does by default', async () => {
  const [r] = await t.db.select('SELECT @@SESSION.sql_mode AS mode');
  expect(String(r?.mode)).toMatch(/\bSTRICT_TRANS_TABLES\b/);
});

test('the tables are those the worker writes, each with the migrations its columns come from', () => {
  expect(Object.keys(TABLES).sort()).toEqual([...DJANGO_TABLES].sort());
  for (const [table, spec] of Object.entries(TABLES)) {
    expect([table, spec.migrations.length > 0]).toEqual([table, true]);
  }
});

describe.each(Object.keys(TABLES))('%s', (table) => {
  test("has exactly the columns of Smarter's migrations: type, NULL or NOT NULL, no DEFAULT", async () => {
    const rows = await t.db.select(
      `SELECT c.COLUMN_NAME AS name, c.COLUMN_TYPE AS type, c.IS_NULLABLE AS nullable, c.COLUMN_DEFAULT AS dflt,
              (SELECT COUNT(*) FROM information_schema.CHECK_CONSTRAINTS k
                WHERE k.CONSTRAINT_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME AND k.CONSTRAINT_NAME = c.COLUMN_NAME
                  AND k.CHECK_CLAUSE LIKE 'json_valid(%') AS json
         FROM information_schema.COLUMNS c WHERE c.TABLE_SCHEMA = ? AND c.TABLE_NAME = ?`,
      [t.name, table],
    );
    const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1);
    const actual = rows
      .map((r) => ({
        name: String(r.name),
        type: String(r.type),
        nullable: r.nullable === 'YES',
        // MariaDB shows a nullable column without a DEFAULT as 'NULL'.
        dflt: r.dflt === null || r.dflt === 'NULL' ? null : String(r.dflt),
        json: Number(r.json) > 0,
      }))
      .sort(byName);
    const expected = columnsOf(table)
      .map((c) => ({
        name: c.name,
        type: columnType(c.field),
        nullable: c.nullable,
        dflt: null,
        json: c.field === 'JSONField',
      }))
      .sort(byName);
    expect(actual).toEqual(expected);
  });

  test('an INSERT that leaves out a NOT NULL column fails with error 1364, naming it', async () => {
    const required = columnsOf(table).filter((c) => !c.nullable && c.field !== 'BigAutoField');
    for (const left of required) {
      const given = required.filter((c) => c !== left);
      const sql =
        given.length === 0
          ? `INSERT INTO \`${table}\` () VALUES ()`
          : `INSERT INTO \`${table}\` (${given.map((c) => `\`${c.name}\``).join(', ')}) VALUES (${given.map(() => '?').join(', ')})`;
      const values = given.map((c) =>
        c.field === 'JSONField'
          ? '{}'
          : c.field === 'DateTimeField'
            ? '2026-01-01 00:00:00'
            : /Char|Text|URL|Email|Image|IPAddress|Binary/.test(c.field)
              ? ''
              : 0,
      );
      const refused = await t.db.execute(sql, values).then(
        () => null,
        (err: unknown) => err as { sqlCode?: string; message?: string },
      );
      expect([
        left.name,
        refused?.sqlCode,
        refused?.message?.includes(`Field '${left.name}' doesn't have a default value`),
      ]).toEqual([left.name, 'ER_NO_DEFAULT_FOR_FIELD', true]);
    }
  });

  // Django writes '' for a NOT NULL string field that is not given (Field.get_default), a value the database never fills.
  test("the worker's Python defaults (tasks/db/django-defaults.ts) name only its columns, and every NOT NULL string column", () => {
    const defaults = pythonDefaults(table as (typeof DJANGO_TABLES)[number]);
    const columns = columnsOf(table);
    expect(Object.keys(defaults).filter((k) => !columns.some((c) => c.name === k))).toEqual([]);
    const strings = columns.filter((c) => !c.nullable && /^(Char|Text|URL|Email|Binary)Field/.test(c.field));
    expect(strings.filter((c) => !(c.name in defaults)).map((c) => c.name)).toEqual([]);
  });
});
