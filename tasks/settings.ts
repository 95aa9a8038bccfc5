/**
 * Smarter's own settings, read from the environment variables Smarter's Django settings read
 * (`get_env(NAME)` tries NAME, then SMARTER_NAME), so one `.env` serves the Python and the TypeScript side.
 */
import { parsers, type Setting } from '../lib/config/settings.js';
import { WORKER_SETTINGS } from '../lib/app/worker-settings.js';
import { MCP_LLM_SETTINGS } from './cloud/mcp-llm-settings.js';
import { CLOUD_SETTINGS } from './cloud/settings.js';
import { VECTORSTORE_CLOUD_SETTINGS } from './cloud/vectorstore-settings.js';
import { INFRASTRUCTURE_SETTINGS } from './env/settings.js';
import { LLMHOST_SETTINGS } from './env/settings.js';
import { both, pyBool } from './smarter-env.js';

const setting = <T>(s: Setting<T>): Setting<T> => s;

export const SMARTER_SETTINGS = {
  operationalQueue: setting({
    env: both('LLM_CLIENT_TASKS_CELERY_TASK_QUEUE'),
    default: 'default_celery_task_queue',
    parse: parsers.string,
    doc: 'Queue of operational tasks (ADR-030); the default for `-Q`.',
  }),
  infrastructureQueue: setting({
    env: both('INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE'),
    default: 'infrastructure_celery_task_queue',
    parse: parsers.string,
    doc: 'Queue of infrastructure tasks (ADR-030).',
  }),
  maxRetries: setting({
    env: both('LLM_CLIENT_TASKS_CELERY_MAX_RETRIES'),
    default: 3,
    parse: parsers.int(1, 1000),
    doc: "Autoretry limit of Smarter's retrying tasks (must be > 0, as in Smarter).",
  }),
  retryBackoff: setting({
    env: both('LLM_CLIENT_TASKS_CELERY_RETRY_BACKOFF'),
    default: true,
    parse: pyBool,
    doc: 'Exponential backoff with jitter for those retries (Celery `retry_backoff`).',
  }),
  mysqlHost: setting({
    env: ['SMARTER_MYSQL_HOST'],
    default: '127.0.0.1',
    parse: parsers.string,
    doc: "MariaDB/MySQL host of Smarter's database.",
  }),
  mysqlPort: setting({ env: ['SMARTER_MYSQL_PORT'], default: 3306, parse: parsers.int(1, 65535), doc: 'Its port.' }),
  mysqlDatabase: setting({
    env: ['SMARTER_MYSQL_DATABASE'],
    default: 'smarter',
    parse: parsers.string,
    doc: 'Database name.',
  }),
  mysqlUser: setting({ env: ['SMARTER_MYSQL_USER'], default: 'smarter', parse: parsers.string, doc: 'Database user.' }),
  mysqlPassword: setting({
    env: ['SMARTER_MYSQL_PASSWORD'],
    default: '',
    parse: parsers.string,
    secret: true,
    doc: 'Database password (never logged).',
  }),
  mysqlPoolSize: setting({
    env: ['SMARTER_WORKER_DB_POOL_SIZE'],
    default: 10,
    parse: parsers.int(1, 500),
    doc: 'Connections in the database pool; more than `-c` buys nothing.',
  }),
};

/** Everything `smarter-worker` reads. Smarter sets `CELERY_TASK_TIME_LIMIT = 30 * 60`; it is our default too. */
export const SETTINGS = {
  ...WORKER_SETTINGS,
  taskTimeLimit: { ...WORKER_SETTINGS.taskTimeLimit, default: 1800 },
  ...SMARTER_SETTINGS,
  ...CLOUD_SETTINGS,
  ...INFRASTRUCTURE_SETTINGS,
  ...VECTORSTORE_CLOUD_SETTINGS,
  ...LLMHOST_SETTINGS,
  ...MCP_LLM_SETTINGS,
};
