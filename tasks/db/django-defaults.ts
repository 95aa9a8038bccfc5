/**
 * What Django writes for the fields a row is created without (`Model.objects.create(...)`), for the tables the
 * worker writes: the field's `default=` (a callable is called), else `''` for a string field that is NOT NULL,
 * else NULL. Smarter's database has no column defaults (Django keeps `default=` in Python), so a row written
 * without these values would be refused (NOT NULL, error 1364) or would differ from Django's (NULL for `'1.0.0'`).
 * The values are those of Smarter's migrations; spec/support/smarter-migrations.ts names them.
 */

/** A cell as the mysql2 driver takes it: JSONField values as their JSON text. */
export type DefaultCell = string | number | null;

/** `MetaDataModel`: description, version, annotations (`default=list`). */
const META = { name: '', description: '', version: '1.0.0', annotations: '[]' } as const;

/** `django.utils.timezone.now()` as DATETIME(6) text in UTC. */
function utcNow(): string {
  return `${new Date().toISOString().replace('T', ' ').replace('Z', '')}000`;
}

const DEFAULTS = {
  account_charge: () => ({ resource_locator: '', charge_type: 'completion', total_cost: '0' }),
  account_aggregatedcharges: () => ({ resource_locator: '', charge_type: 'completion', total_cost: '0' }),
  account_resourceconstraint: () => ({ resource_locator: '', is_active: 1, start_date: utcNow() }),
  account_resourcelock: () => ({ resource_locator: '', reason: '' }),
  prompt_prompt: () => ({ ...META, session_key: '', ip_address: null, user_agent: '', url: '' }),
  prompt_prompthistory: () => ({}),
  prompt_prompttoolcall: () => ({}),
  prompt_promptpluginusage: () => ({}),
  plugin_pluginselectorhistory: () => ({ search_term: '', messages: '[]', session_key: '' }),
  llmclient_llmclientrequests: () => ({ is_aggregation: 0 }),
  llmclient_llmclient: () => ({
    ...META,
    deployed: 0,
    provider: 'openai',
    default_system_role:
      'You are a helpful llmclient. When given the opportunity to utilize function calling, you should always do so. This will allow you to provide the best possible responses to the user. If you are unable to provide a response, you should prompt the user for more information. If you are still unable to provide a response, you should inform the user that you are unable to help them at this time.',
    default_temperature: 0.5,
    default_max_tokens: 2048,
    app_name: 'llmclient',
    app_assistant: 'Smarter',
    app_welcome_message: 'Welcome to the llmclient!',
    app_example_prompts: '[]',
    app_placeholder: 'Type something here...',
    app_info_url: 'https://smarter.sh',
    app_file_attachment: 0,
    dns_verification_status: 'Not Verified',
    tls_certificate_issuance_status: 'No Certificate',
  }),
  llmclient_llmclientcustomdomain: () => ({
    ...META,
    aws_hosted_zone_id: '',
    domain_name: '',
    verification_status: 'Not Verified',
    verification_message: '',
  }),
  llmclient_llmclientcustomdomaindns: () => ({ record_name: '', record_type: '', record_value: '', record_ttl: 600 }),
  llmhost_llmhost: () => ({
    ...META,
    model_repository: '',
    model_revision: '',
    license: '',
    model_architecture: '',
    quantization: 'none',
    supports_streaming: 1,
    supports_function_calling: 0,
    supports_vision: 0,
    supports_reasoning: 0,
    inference_engine: 'vllm',
    api_format: 'openai_compatible',
    endpoint_url: '',
    public_url: '',
    health_check_url: '',
    gpu_type: '',
    gpu_count: 0,
    status: 'inactive',
    status_message: '',
    is_active: 1,
    model_source: 'huggingface',
    model_task: 'text-generation',
    served_model_name: '',
    spec: '{}',
    replicas: 1,
    ready_replicas: 0,
  }),
  llmhost_llmhostevent: () => ({ llmhost_name: '', event_type: '', status: '', message: '', details: '{}' }),
  llmhost_llmhostcompute: () => ({
    ...META,
    spec: '{}',
    instance_type: '',
    cpu: 1,
    memory_gb: 1,
    gpu_type: '',
    gpu_count: 0,
    gpu_memory_gb: 0,
    max_nodes: 4,
    nodegroup_status: 'absent',
    desired_nodes: 0,
    ready_nodes: 0,
    status_message: '',
  }),
  infrastructure_infrastructureresource: () => ({
    provider: '',
    service: '',
    resource_type: '',
    resource_name: '',
    resource_id: '',
    billable: 0,
    status: 'active',
  }),
  vectorstore_vectorstoremeta: () => ({
    ...META,
    spec: '{}',
    backend: '',
    hosting: 'managed',
    is_active: 1,
    dimension: 1536,
    metric: 'cosine',
    deletion_protection: 0,
    embeddings_model: '',
    status: 'pending',
    status_message: '',
    index_name: '',
    endpoint_url: '',
    vector_count: 0,
    stats: '{}',
  }),
  vectorstore_vectorstoredocument: () => ({
    name: '',
    source: '',
    content_type: '',
    content: '',
    sha256: '',
    size_bytes: 0,
    metadata: '{}',
    status: 'pending',
    status_message: '',
    chunk_count: 0,
  }),
  vectorstore_vectorstoresnapshot: () => ({ name: '', status: 'creating', status_message: '', scheduled: 1 }),
  mcpclient_mcpclient: () => ({
    ...META,
    transport: 'http',
    auth_type: 'none',
    allowed_tools: '[]',
    allowed_resources: '[]',
    is_active: 1,
    status: 'unconfigured',
    priority: 100,
    api_key_header: 'X-API-Key',
    cache_ttl: 300,
    headers: '{}',
    include_instructions: 1,
    timeout: 30,
    tools: '[]',
  }),
  provider_provider: () => ({
    ...META,
    status: 'unverified',
    is_default: 0,
    is_active: 0,
    is_verified: 0,
    is_featured: 0,
    is_deprecated: 0,
    is_flagged: 0,
    is_suspended: 0,
    connectivity_test_path: '',
  }),
  provider_providermodel: () => ({
    name: '',
    is_default: 0,
    is_active: 0,
    is_deprecated: 0,
    is_flagged: 0,
    is_suspended: 0,
    max_completion_tokens: 4096,
    temperature: 0.7,
    top_p: 1.0,
    supports_text_input: 1,
    supports_text_generation: 1,
    supports_translation: 1,
    supports_summarization: 1,
    supports_streaming: 0,
    supports_tools: 0,
    supports_image_input: 0,
    supports_audio_input: 0,
    supports_embedding: 0,
    supports_fine_tuning: 0,
    supports_search: 0,
    supports_code_interpreter: 0,
    supports_image_generation: 0,
    supports_audio_generation: 0,
  }),
  provider_providerverification: () => ({ verification_type: 'api_connectivity', is_successful: 0 }),
  provider_providermodelverification: () => ({ verification_type: 'text_input', is_successful: 0 }),
  // BinaryField: b'' when not given.
  secret_secret: () => ({ ...META, encrypted_value: '' }),
} satisfies Record<string, () => Record<string, DefaultCell>>;

export type DjangoTable = keyof typeof DEFAULTS;

/** A fresh copy of the table's defaults (a callable default, such as `timezone.now`, is called now). */
export function pythonDefaults(table: DjangoTable): Record<string, DefaultCell> {
  return DEFAULTS[table]();
}

export const DJANGO_TABLES = Object.keys(DEFAULTS) as DjangoTable[];
