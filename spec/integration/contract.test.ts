/**
 * The contract check reads synthetic Smarter checkouts through /usr/bin/python3's ast: the newest line's shape
 * (spec/fixtures/smarter-newest, 39 tasks, 11 Beat entries) agrees with this worker line for line, and each kind
 * of drift Smarter can make shows as its own line; the 0.14 layout (`llm_client`) is read as well.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contractCommand, differences, formatText } from '../../tasks/cli/contract/index.js';
import { readSmarter } from '../../tasks/cli/contract/smarter-source.js';
import { UsageError } from '../../tasks/cli/options.js';

const NEWEST = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/smarter-newest');
const APPS = 'smarter/smarter/apps';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A copy of the newest-line tree, with each edit applied (the text replaced must be there). */
function drifted(edits: [file: string, from: string, to: string][], files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'smarter-contract-'));
  dirs.push(dir);
  cpSync(NEWEST, dir, { recursive: true });
  for (const [file, from, to] of edits) {
    const path = join(dir, file);
    const text = readFileSync(path, 'utf8');
    if (!text.includes(from)) throw new Error(`${file} has no ${from}`);
    writeFileSync(path, text.replace(from, to));
  }
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

async function lines(checkout: string, scope: 'worker' | 'beat' = 'worker'): Promise<string[]> {
  const smarter = await readSmarter(checkout);
  return differences(smarter, scope).map((d) => `${d.group} | ${d.subject}: ${d.message}`);
}

const IMPORTS = 'from smarter.common.conf import smarter_settings\nfrom smarter.workers.celery import app\n';

// Smarter: smarter/smarter/apps/*/tasks(.py|/), smarter/smarter/workers/celerybeat.py, smarter/smarter/common/conf/{defaults,settings}.py.
test("a tree shaped like Smarter's newest line has no difference with this worker's 39 tasks and 11 Beat entries: exit 0", async () => {
  const smarter = await readSmarter(NEWEST);
  expect(smarter.layout).toBe('adr-030');
  expect(smarter.tasks).toHaveLength(39);
  expect(smarter.beat?.entries).toHaveLength(11);
  expect(differences(smarter, 'worker')).toEqual([]);
  const out: string[] = [];
  await expect(contractCommand({ smarter: NEWEST }, 'worker', (s) => out.push(s))).resolves.toBe(0);
  expect(out.join('\n')).toMatch(/39 tasks, 11 Beat entries\n\nNo differences\.$/);
  out.length = 0;
  await expect(contractCommand({ smarter: NEWEST, json: true }, 'beat', (s) => out.push(s))).resolves.toBe(0);
  expect(JSON.parse(out.join(''))).toMatchObject({ smarter: { layout: 'adr-030', beatEntries: 11 }, count: 0 });
});

test('a task Smarter adds is a missing task; one it removes, or renames with name=, an extra task', async () => {
  const dir = drifted(
    [
      [`${APPS}/plugin/tasks.py`, 'def create_plugin_charge(*args, **kwargs):', 'def _gone(*args, **kwargs):'],
      [
        `${APPS}/mcpclient/tasks/__init__.py`,
        '@app.task(queue=smarter_settings.llmclient_tasks_celery_task_queue)\ndef refresh_mcpclients()',
        '@app.task(queue=smarter_settings.llmclient_tasks_celery_task_queue, name="mcp.refresh_all")\ndef refresh_mcpclients()',
      ],
    ],
    {
      [`${APPS}/llmclient/tasks/rotate_certificate.py`]: `${IMPORTS}\n\n@shared_task(queue=smarter_settings.infrastructure_tasks_celery_task_queue)\ndef rotate_certificate(certificate_arn: str):\n    ...\n`,
    },
  );
  expect(await lines(dir)).toEqual([
    'missing task | mcp.refresh_all: Smarter registers it; this worker does not',
    'missing task | smarter.apps.llmclient.tasks.rotate_certificate.rotate_certificate: Smarter registers it; this worker does not',
    'missing task | smarter.apps.plugin.tasks._gone: Smarter registers it; this worker does not',
    'extra task | smarter.apps.mcpclient.tasks.refresh_mcpclients: this worker registers it; Smarter does not',
    'extra task | smarter.apps.plugin.tasks.create_plugin_charge: this worker registers it; Smarter does not',
    'Beat entry | refresh-mcpclients: sends smarter.apps.mcpclient.tasks.refresh_mcpclients, which Smarter does not register',
  ]);
});

test('arguments: a renamed, moved, newly required one or a changed default is a line; an argument this worker adds with a default is not', async () => {
  const dir = drifted([
    [`${APPS}/llmhost/tasks/__init__.py`, 'purge: bool = False', 'purge_volume: bool = False'],
    [`${APPS}/guardrail/tasks/__init__.py`, 'days: int = 90', 'days: int = 30'],
    [
      `${APPS}/llmclient/tasks/destroy_domain_a_record.py`,
      'hostname: str, api_host_domain: str,',
      'api_host_domain: str, hostname: str,',
    ],
    [`${APPS}/llmclient/tasks/deploy_custom_api.py`, 'llmclient_id: int', 'llmclient_id: int, hostname: str'],
    [
      `${APPS}/llmhost/tasks/__init__.py`,
      'def launch_llmhost(llmhost_id: int)',
      'def launch_llmhost(llmhost_id: int = None)',
    ],
    // verify_certificate(certificate_arn) stays as Smarter has it: this worker's extra `attempt` has a default.
  ]);
  expect(await lines(dir)).toEqual([
    'argument | smarter.apps.guardrail.tasks.purge_guardrail_events: days: default 30 in Smarter, 90 here',
    "argument | smarter.apps.llmclient.tasks.deploy_custom_api.deploy_custom_api: position 2: Smarter's hostname is not an argument here",
    'argument | smarter.apps.llmclient.tasks.destroy_domain_a_record.destroy_domain_A_record: api_host_domain: position 1 in Smarter, 2 here',
    'argument | smarter.apps.llmclient.tasks.destroy_domain_a_record.destroy_domain_A_record: hostname: position 2 in Smarter, 1 here',
    'argument | smarter.apps.llmhost.tasks.destroy_llmhost: position 2: Smarter purge_volume, here purge',
    "argument | smarter.apps.llmhost.tasks.launch_llmhost: llmhost_id: Smarter's default is None; here it is required",
  ]);
});

test('a task moved to the other queue, or a Beat entry, is a queue line; a changed retry policy a retry policy line', async () => {
  const dir = drifted([
    [
      `${APPS}/llmhost/tasks/__init__.py`,
      '@app.task(queue=smarter_settings.infrastructure_tasks_celery_task_queue)\ndef launch_llmhost',
      '@app.task(queue=smarter_settings.llmclient_tasks_celery_task_queue)\ndef launch_llmhost',
    ],
    [
      `${APPS}/vectorstore/tasks.py`,
      '@app.task(queue=QUEUE)\ndef load_vectorstore_document',
      '@app.task\ndef load_vectorstore_document',
    ],
    [
      `${APPS}/account/tasks.py`,
      'autoretry_for=(Exception,),\n    retry_backoff=smarter_settings.llmclient_tasks_celery_retry_backoff,\n    max_retries=smarter_settings.llmclient_tasks_celery_max_retries,\n    queue=smarter_settings.llmclient_tasks_celery_task_queue,\n)\ndef create_charge',
      'queue=smarter_settings.llmclient_tasks_celery_task_queue,\n)\ndef create_charge',
    ],
    [
      `${APPS}/provider/tasks.py`,
      'max_retries=smarter_settings.llmclient_tasks_celery_max_retries,\n    queue=smarter_settings.llmclient_tasks_celery_task_queue,\n)\ndef verify_provider(',
      'max_retries=5,\n    queue=smarter_settings.llmclient_tasks_celery_task_queue,\n)\ndef verify_provider(',
    ],
    [
      `${APPS}/llmclient/tasks/register_custom_domain.py`,
      'autoretry_for=(Exception,)',
      'autoretry_for=(ConnectionError, TimeoutError)',
    ],
    [
      `${APPS}/mcpclient/tasks/__init__.py`,
      '@app.task(queue=smarter_settings.llmclient_tasks_celery_task_queue)\ndef refresh_mcpclient(',
      '@app.task(queue=smarter_settings.llmclient_tasks_celery_task_queue, autoretry_for=(Exception,))\ndef refresh_mcpclient(',
    ],
  ]);
  expect(await lines(dir)).toEqual([
    'queue | smarter.apps.llmhost.tasks.launch_llmhost: Smarter smarter_settings.llmclient_tasks_celery_task_queue ("default_celery_task_queue"); here infrastructure_celery_task_queue',
    `queue | smarter.apps.vectorstore.tasks.load_vectorstore_document: Smarter declares no queue (Celery's "celery"); here default_celery_task_queue`,
    'retry policy | smarter.apps.account.tasks.create_charge: Smarter does not retry automatically; here it autoretries',
    'retry policy | smarter.apps.llmclient.tasks.register_custom_domain.register_custom_domain: Smarter autoretry_for=(ConnectionError, TimeoutError,); here every error but the permanent ones',
    'retry policy | smarter.apps.mcpclient.tasks.refresh_mcpclient: Smarter autoretry_for=(Exception,); here no autoretry',
    'retry policy | smarter.apps.provider.tasks.verify_provider: max_retries: Smarter 5; here 3',
  ]);
});

test('Beat: an entry moved to the other queue, rescheduled, added or removed, and one sending another task, is a Beat entry line', async () => {
  const beat = 'smarter/smarter/workers/celerybeat.py';
  const dir = drifted([
    [
      beat,
      '"schedule": timedelta(minutes=5),\n        "options": INFRASTRUCTURE,\n    },\n    "reconcile-llmhost-computes"',
      '"schedule": timedelta(minutes=5),\n        "options": OPERATIONAL,\n    },\n    "reconcile-llmhost-computes"',
    ],
    [beat, '"schedule": timedelta(minutes=15)', '"schedule": crontab(minute="*/15")'],
    [
      beat,
      '"task": "smarter.apps.account.tasks.evaluate_budget_constraints",\n        "schedule": timedelta(hours=1)',
      '"task": "smarter.apps.account.tasks.aggregate_records",\n        "schedule": 1800',
    ],
    [
      beat,
      '    "refresh-mcpclients": {',
      '    "purge-prompt-history": {\n        "task": "smarter.apps.prompt.tasks.aggregate_prompt_history",\n        "schedule": 60 * 60 * 24,\n        "options": {**OPERATIONAL, "expires": 600},\n    },\n    "refresh-mcpclients-gone": {',
    ],
  ]);
  const beatLines = [
    'Beat entry | evaluate-budget-constraints: task: Smarter smarter.apps.account.tasks.aggregate_records; here smarter.apps.account.tasks.evaluate_budget_constraints',
    'Beat entry | evaluate-budget-constraints: schedule: Smarter every 1800 s; here every 3600 s',
    "Beat entry | purge-prompt-history: Smarter's (smarter.apps.prompt.tasks.aggregate_prompt_history, every 86400 s); smarter-beat does not send it",
    'Beat entry | refresh-llmhost-status: queue: Smarter "default_celery_task_queue"; here "infrastructure_celery_task_queue"',
    "Beat entry | refresh-mcpclients: smarter-beat sends it (smarter.apps.mcpclient.tasks.refresh_mcpclients); Smarter's schedule has no such entry",
    "Beat entry | refresh-mcpclients-gone: Smarter's (smarter.apps.mcpclient.tasks.refresh_mcpclients, every 3600 s); smarter-beat does not send it",
    'Beat entry | sync-infrastructure-inventory: schedule: Smarter crontab(minute=*/15); here every 900 s',
  ];
  expect(await lines(dir)).toEqual(beatLines);
  expect(await lines(dir, 'beat')).toEqual(beatLines);
});

test("settings: an environment variable Smarter renames, or a default it changes, is a setting line, and the tasks' options follow the new default", async () => {
  const dir = drifted([
    [
      'smarter/smarter/common/conf/defaults.py',
      'get_env(\n        "INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE"',
      'get_env(\n        "INFRA_QUEUE"',
    ],
    [
      'smarter/smarter/common/conf/defaults.py',
      '"LLM_CLIENT_TASKS_CELERY_MAX_RETRIES", 3',
      '"LLM_CLIENT_TASKS_CELERY_MAX_RETRIES", 5',
    ],
  ]);
  const out = await lines(dir);
  expect(out.filter((l) => l.startsWith('setting'))).toEqual([
    'setting | smarter_settings.infrastructure_tasks_celery_task_queue: Smarter reads INFRA_QUEUE; this worker reads INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE, SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE',
    'setting | smarter_settings.llmclient_tasks_celery_max_retries: default: Smarter 5; here 3',
  ]);
  // Every task with Smarter's autoretry reads that default: 24 of them.
  expect(out.filter((l) => l.endsWith('max_retries: Smarter 5; here 3'))).toHaveLength(24);
});

// Smarter 0.14 (branch main): smarter/smarter/apps/llm_client/tasks/*.py, settings `llm_client_tasks_celery_*`, Beat on "beat_tasks".
test("the 0.14 layout (app llm_client, one queue, Beat on beat_tasks) is read as such: its llm_client tasks are missing here, the llmclient ones extra, its settings this worker's", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'smarter-014-'));
  dirs.push(dir);
  const files: Record<string, string> = {
    [`${APPS}/llm_client/tasks/__init__.py`]: '',
    [`${APPS}/llm_client/tasks/deploy_default_api.py`]: `${IMPORTS}\n\n@app.task(\n    autoretry_for=(Exception,),\n    retry_backoff=smarter_settings.llm_client_tasks_celery_retry_backoff,\n    max_retries=smarter_settings.llm_client_tasks_celery_max_retries,\n    queue=smarter_settings.llm_client_tasks_celery_task_queue,\n)\ndef deploy_default_api(llm_client_id: int, with_domain_verification: bool = True):\n    ...\n`,
    [`${APPS}/account/tasks.py`]: `${IMPORTS}\n\n@app.task(\n    autoretry_for=(Exception,),\n    retry_backoff=smarter_settings.llm_client_tasks_celery_retry_backoff,\n    max_retries=smarter_settings.llm_client_tasks_celery_max_retries,\n    queue=smarter_settings.llm_client_tasks_celery_task_queue,\n)\ndef aggregate_records():\n    ...\n`,
    'smarter/smarter/workers/celerybeat.py': `from smarter.workers.celery import app\n\napp.conf.beat_schedule = {\n    "aggregate-charges": {\n        "task": "smarter.apps.account.tasks.aggregate_records",\n        "schedule": 60 * 60,\n        "options": {"queue": "beat_tasks"},\n    },\n}\n`,
    'smarter/smarter/common/conf/defaults.py': `class SettingsDefaults:\n    LLM_CLIENT_TASKS_CELERY_MAX_RETRIES: int = int(get_env("LLM_CLIENT_TASKS_CELERY_MAX_RETRIES", 3))\n    LLM_CLIENT_TASKS_CELERY_RETRY_BACKOFF: bool = bool_environment_variable("LLM_CLIENT_TASKS_CELERY_RETRY_BACKOFF", True)\n    LLM_CLIENT_TASKS_CELERY_TASK_QUEUE: str = get_env("LLM_CLIENT_TASKS_CELERY_TASK_QUEUE", "default_celery_task_queue")\n`,
    'smarter/smarter/common/conf/settings.py': `class Settings(BaseSettings):\n    @property\n    def llm_client_tasks_celery_task_queue(self) -> str:\n        return settings_defaults.LLM_CLIENT_TASKS_CELERY_TASK_QUEUE\n`,
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  const smarter = await readSmarter(dir);
  expect(smarter.layout).toBe('llm_client');
  const out = differences(smarter, 'worker');
  expect(out.filter((d) => d.group === 'missing task').map((d) => `${d.subject} ${d.where ?? ''}`)).toEqual([
    `smarter.apps.llm_client.tasks.deploy_default_api.deploy_default_api ${APPS.slice('smarter/'.length)}/llm_client/tasks/deploy_default_api.py:11`,
  ]);
  expect(out.filter((d) => d.group === 'extra task')).toHaveLength(38);
  expect(out.filter((d) => d.group === 'setting' || d.group === 'argument' || d.group === 'queue')).toEqual([]);
  expect(out.filter((d) => d.subject === 'aggregate-charges').map((d) => d.message)).toEqual([
    'queue: Smarter "beat_tasks"; here "default_celery_task_queue"',
  ]);
  expect(formatText(smarter, out, 'worker')).toMatch(
    /^Smarter at .* \(the llm_client app of 0\.14\): 2 tasks, 1 Beat entries\n/,
  );
});

test('without --smarter it is a usage error; a path that is not a Smarter checkout exits 2 saying so', async () => {
  await expect(contractCommand({}, 'worker', () => undefined)).rejects.toBeInstanceOf(UsageError);
  const empty = mkdtempSync(join(tmpdir(), 'not-smarter-'));
  dirs.push(empty);
  const written: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = (s: string) => written.push(s) > 0;
  try {
    await expect(contractCommand({ smarter: empty }, 'worker', () => undefined)).resolves.toBe(2);
  } finally {
    process.stderr.write = write;
  }
  expect(written.join('')).toContain('not a Smarter checkout');
});
