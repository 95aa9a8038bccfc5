/**
 * Celery 5.6's settings (celery/app/defaults.py, all 194) by the name a Django project gives them in the
 * environment, `CELERY_<NAME>`: each is either read by a declared setting (it names the variable among its
 * `env`), or has no meaning for this worker, with the reason. At start the worker names, in one warning, the
 * ones that are set but not applicable, and, in another, the `CELERY_*` variables that are no setting at all
 * (a typo), so no Celery setting is ignored without a word.
 */
import type { Settings } from './settings.js';

/** Every setting name of Celery 5.6.3's `celery/app/defaults.py` (`flatten(NAMESPACES)`). */
export const CELERY_56_SETTINGS: readonly string[] = [
  'accept_content',
  'arangodb_backend_settings',
  'azureblockblob_base_path',
  'azureblockblob_connection_timeout',
  'azureblockblob_container_name',
  'azureblockblob_read_timeout',
  'azureblockblob_retry_increment_base',
  'azureblockblob_retry_initial_backoff_sec',
  'azureblockblob_retry_max_attempts',
  'beat_cron_starting_deadline',
  'beat_max_loop_interval',
  'beat_schedule',
  'beat_schedule_filename',
  'beat_scheduler',
  'beat_sync_every',
  'broker_channel_error_retry',
  'broker_connection_max_retries',
  'broker_connection_retry',
  'broker_connection_retry_on_startup',
  'broker_connection_timeout',
  'broker_failover_strategy',
  'broker_heartbeat',
  'broker_heartbeat_checkrate',
  'broker_host',
  'broker_login_method',
  'broker_native_delayed_delivery_queue_type',
  'broker_password',
  'broker_pool_limit',
  'broker_port',
  'broker_read_url',
  'broker_transport',
  'broker_transport_options',
  'broker_url',
  'broker_use_ssl',
  'broker_user',
  'broker_vhost',
  'broker_write_url',
  'cache_backend',
  'cache_backend_options',
  'cassandra_auth_kwargs',
  'cassandra_auth_provider',
  'cassandra_bundle_path',
  'cassandra_entry_ttl',
  'cassandra_keyspace',
  'cassandra_options',
  'cassandra_port',
  'cassandra_read_consistency',
  'cassandra_servers',
  'cassandra_table',
  'cassandra_write_consistency',
  'control_exchange',
  'control_queue_durable',
  'control_queue_exclusive',
  'control_queue_expires',
  'control_queue_ttl',
  'cosmosdbsql_collection_name',
  'cosmosdbsql_consistency_level',
  'cosmosdbsql_database_name',
  'cosmosdbsql_max_retry_attempts',
  'cosmosdbsql_max_retry_wait_time',
  'couchbase_backend_settings',
  'database_create_tables_at_setup',
  'database_engine_options',
  'database_short_lived_sessions',
  'database_table_names',
  'database_table_schemas',
  'database_url',
  'elasticsearch_max_retries',
  'elasticsearch_retry_on_timeout',
  'elasticsearch_save_meta_as_text',
  'elasticsearch_timeout',
  'enable_utc',
  'event_exchange',
  'event_queue_durable',
  'event_queue_exclusive',
  'event_queue_expires',
  'event_queue_prefix',
  'event_queue_ttl',
  'event_serializer',
  'gcs_base_path',
  'gcs_bucket',
  'gcs_project',
  'gcs_ttl',
  'imports',
  'include',
  'mongodb_backend_settings',
  'redis_backend_use_ssl',
  'redis_db',
  'redis_host',
  'redis_max_connections',
  'redis_password',
  'redis_port',
  'redis_retry_on_timeout',
  'redis_socket_connect_timeout',
  'redis_socket_keepalive',
  'redis_socket_timeout',
  'redis_username',
  'result_accept_content',
  'result_backend',
  'result_backend_always_retry',
  'result_backend_base_sleep_between_retries_ms',
  'result_backend_max_retries',
  'result_backend_max_sleep_between_retries_ms',
  'result_backend_transport_options',
  'result_cache_max',
  'result_chord_join_timeout',
  'result_chord_retry_interval',
  'result_compression',
  'result_exchange',
  'result_exchange_type',
  'result_expires',
  'result_extended',
  'result_persistent',
  'result_serializer',
  's3_access_key_id',
  's3_base_path',
  's3_bucket',
  's3_endpoint_url',
  's3_region',
  's3_secret_access_key',
  'security_cert_store',
  'security_certificate',
  'security_digest',
  'security_key',
  'security_key_password',
  'task_acks_late',
  'task_acks_on_failure_or_timeout',
  'task_allow_error_cb_on_chord_header',
  'task_always_eager',
  'task_annotations',
  'task_compression',
  'task_create_missing_queue_exchange_type',
  'task_create_missing_queue_type',
  'task_create_missing_queues',
  'task_default_delivery_mode',
  'task_default_exchange',
  'task_default_exchange_type',
  'task_default_priority',
  'task_default_queue',
  'task_default_queue_type',
  'task_default_rate_limit',
  'task_default_routing_key',
  'task_eager_propagates',
  'task_ignore_result',
  'task_inherit_parent_priority',
  'task_protocol',
  'task_publish_retry',
  'task_publish_retry_policy',
  'task_queue_max_priority',
  'task_queues',
  'task_reject_on_worker_lost',
  'task_remote_tracebacks',
  'task_routes',
  'task_send_sent_event',
  'task_serializer',
  'task_soft_time_limit',
  'task_store_eager_result',
  'task_store_errors_even_if_ignored',
  'task_time_limit',
  'task_track_started',
  'timezone',
  'worker_agent',
  'worker_autoscaler',
  'worker_cancel_long_running_tasks_on_connection_loss',
  'worker_concurrency',
  'worker_consumer',
  'worker_deduplicate_successful_tasks',
  'worker_detect_quorum_queues',
  'worker_direct',
  'worker_disable_prefetch',
  'worker_disable_rate_limits',
  'worker_enable_prefetch_count_reduction',
  'worker_enable_remote_control',
  'worker_enable_soft_shutdown_on_idle',
  'worker_eta_task_limit',
  'worker_hijack_root_logger',
  'worker_log_color',
  'worker_log_format',
  'worker_lost_wait',
  'worker_max_memory_per_child',
  'worker_max_tasks_per_child',
  'worker_pool',
  'worker_pool_putlocks',
  'worker_pool_restarts',
  'worker_prefetch_multiplier',
  'worker_proc_alive_timeout',
  'worker_redirect_stdouts',
  'worker_redirect_stdouts_level',
  'worker_send_task_events',
  'worker_soft_shutdown_timeout',
  'worker_state_db',
  'worker_task_log_format',
  'worker_timer',
  'worker_timer_precision',
];

const BACKENDS = 'a result backend this worker does not have (redis://, rediss:// and rpc:// only)';
const SENDER = "read where a task is sent (Smarter's Python `apply_async`), not by a worker";
const BEAT = 'read by Beat (`celery beat`, smarter-beat), not by a worker';

/** Why a Celery setting has no meaning here: by exact name first, then by prefix. */
const REASONS: ReadonlyArray<readonly [string | RegExp, string]> = [
  [/^(arangodb|azureblockblob|cassandra|cosmosdbsql|couchbase|database|elasticsearch|gcs|mongodb|s3|cache)_/, BACKENDS],
  [
    /^redis_(db|host|port|password|username|max_connections|socket_timeout|socket_connect_timeout|retry_on_timeout|socket_keepalive)$/,
    'the Redis result backend is configured by its URL (CELERY_RESULT_BACKEND)',
  ],
  [/^beat_/, BEAT],
  [/^security_/, "message signing (Celery's `auth` serializer) is not supported: such messages are refused"],
  [
    /^task_(always_eager|eager_propagates|store_eager_result|compression|serializer|routes|queues|default_exchange|default_exchange_type|default_routing_key|default_delivery_mode|default_priority|inherit_parent_priority|publish_retry|publish_retry_policy|send_sent_event|protocol|create_missing_queues|create_missing_queue_type|create_missing_queue_exchange_type|queue_max_priority|allow_error_cb_on_chord_header)$/,
    SENDER,
  ],
  [
    'task_default_queue',
    "each application names its default queue (Smarter's from SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE)",
  ],
  [
    /^broker_(read_url|write_url|host|port|user|password|vhost|transport)$/,
    'the broker is named by one URL (CELERY_BROKER_URL)',
  ],
  [
    /^broker_(login_method|pool_limit|heartbeat_checkrate|failover_strategy|channel_error_retry)$/,
    'kombu connection detail: the broker client here has its own (failover is round-robin)',
  ],
  [/^broker_connection_retry(_on_startup)?$/, 'the worker always reconnects, at start and after a loss'],
  [
    /^(control|event)_(queue_ttl|queue_expires|queue_exclusive|queue_durable|exchange|queue_prefix)$/,
    "Celery's defaults are used, as the Python tools expect them",
  ],
  ['event_serializer', 'events are sent as JSON, which every Celery tool reads'],
  [
    /^result_(accept_content|serializer|compression|persistent|exchange|exchange_type|backend_transport_options|cache_max)$/,
    'results are stored as JSON, as Python Celery reads them by default',
  ],
  [/^result_(chord_retry_interval|chord_join_timeout)$/, 'chords are joined by the Python side'],
  [
    /^result_backend_(always_retry|max_retries|base_sleep_between_retries_ms|max_sleep_between_retries_ms)$/,
    'a store that fails is retried by the worker its own way (docs/reliability.md)',
  ],
  [/^(imports|include)$/, 'the tasks are compiled into this worker; there are no Python modules to import'],
  [/^(enable_utc|timezone)$/, 'every time is UTC, as Celery sends and reads it'],
  [
    /^worker_(pool|pool_putlocks|proc_alive_timeout|lost_wait|consumer|agent|autoscaler|timer|timer_precision|hijack_root_logger|redirect_stdouts|redirect_stdouts_level|log_format|task_log_format|log_color)$/,
    'a Python worker internal: one Node.js process runs the tasks in async slots and logs JSON lines',
  ],
  ['worker_direct', 'no per-worker direct queue (`C.dq2`) is consumed'],
  ['worker_deduplicate_successful_tasks', 'not honoured: a redelivered late-ack task runs again'],
  ['worker_eta_task_limit', 'far countdowns are parked in the broker instead of held (SMARTER_WORKER_ETA_HOLD_MAX)'],
  ['worker_enable_prefetch_count_reduction', 'the prefetch is not reduced after a connection loss'],
  ['worker_detect_quorum_queues', 'the prefetch is always per consumer, as quorum queues need'],
  ['worker_enable_soft_shutdown_on_idle', 'a warm shutdown of an idle worker ends at once'],
  ['worker_enable_remote_control', 'remote control is set by SMARTER_WORKER_CONTROL (all, inspect, or a list)'],
  ['task_remote_tracebacks', 'tracebacks are stored as text, which the Python side shows as it is'],
  ['task_store_errors_even_if_ignored', 'not honoured: an ignored result stores no error either'],
  ['task_reject_on_worker_lost', 'no child process can be lost: one Node.js process runs the tasks'],
];

export type CelerySettingUse = { kind: 'honoured'; env: string } | { kind: 'not-applicable'; why: string };

/** What this worker does with a Celery setting, given the environment names its settings read. */
export function celerySettingUse(name: string, readEnv: ReadonlySet<string>): CelerySettingUse {
  const env = `CELERY_${name.toUpperCase()}`;
  if (readEnv.has(env)) return { kind: 'honoured', env };
  for (const [match, why] of REASONS) {
    if (typeof match === 'string' ? match === name : match.test(name)) return { kind: 'not-applicable', why };
  }
  return { kind: 'not-applicable', why: 'no meaning for this worker' };
}

/** Every environment variable the settings read. */
export function envNames(...settings: Settings[]): Set<string> {
  return new Set(settings.flatMap((s) => Object.values(s).flatMap((x) => x.env)));
}

export interface EnvReport {
  /** `CELERY_<NAME>` set, a Celery setting with no meaning here: the variable and why. */
  notApplicable: Array<{ env: string; why: string }>;
  /** `CELERY_*` set that is neither a Celery setting nor read here (a typo, or an older name). */
  unknown: string[];
}

/**
 * The `CELERY_*` variables of an environment that are not read here. `alsoRead` are variables read by the
 * deployment's other programs (Beat's), which are not this program's to warn about.
 */
export function celeryEnvReport(
  env: Record<string, string | undefined>,
  readEnv: ReadonlySet<string>,
  alsoRead: ReadonlySet<string> = new Set(),
): EnvReport {
  const report: EnvReport = { notApplicable: [], unknown: [] };
  const celery = new Set(CELERY_56_SETTINGS.map((n) => `CELERY_${n.toUpperCase()}`));
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('CELERY_') || env[name] === undefined || readEnv.has(name) || alsoRead.has(name)) continue;
    if (name.startsWith('CELERY_REDBEAT_')) report.notApplicable.push({ env: name, why: `RedBeat's, ${BEAT}` });
    else if (celery.has(name)) {
      const use = celerySettingUse(name.slice('CELERY_'.length).toLowerCase(), readEnv);
      if (use.kind === 'not-applicable') report.notApplicable.push({ env: name, why: use.why });
    } else report.unknown.push(name);
  }
  return report;
}

/** The two start-up warnings (empty when nothing is to be said). */
export function celeryEnvWarnings(report: EnvReport): string[] {
  const out: string[] = [];
  if (report.notApplicable.length > 0) {
    out.push(
      `Celery settings set that this worker does not apply: ${report.notApplicable.map((x) => `${x.env} (${x.why})`).join('; ')}`,
    );
  }
  if (report.unknown.length > 0) {
    out.push(
      `unknown CELERY_* variable(s), not a Celery 5.6 setting nor read by this worker (a typo?): ${report.unknown.join(', ')}`,
    );
  }
  return out;
}

/** The table `smarter-worker settings` prints after its own: every Celery setting and what is done with it. */
export function celerySettingsTable(readEnv: ReadonlySet<string>): string {
  const rows = CELERY_56_SETTINGS.map((name) => {
    const use = celerySettingUse(name, readEnv);
    return use.kind === 'honoured'
      ? `| \`${name}\` | \`${use.env}\` | honoured |`
      : `| \`${name}\` | \`CELERY_${name.toUpperCase()}\` | ${use.why.startsWith('not ') ? use.why : `not applicable: ${use.why}`} |`;
  });
  return ['| Celery setting | environment | here |', '|---|---|---|', ...rows].join('\n');
}
