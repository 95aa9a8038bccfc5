/**
 * Smarter's callers, for real: Debian's Python Celery (protocol 1, as Smarter sends) calls every operational
 * task by its registered name with the argument shapes of Smarter's code, our worker runs them against a fresh
 * MariaDB with Smarter's tables, and the rows are what Django would have written.
 */
import { testCloud } from '../support/cloud.js';
import type { SmarterDeps } from '../../tasks/env/task-env.js';
import { AMQP_URL, REDIS_URL } from '../support/amqp.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';
import { insertRow } from '../support/django-rows.js';
import { type Harness, startWorker } from '../support/harness.js';
import { smarterTasksOn } from '../support/smarter-db.js';
import { pythonJson } from '../support/python-script.js';

type Outcome = { ok?: unknown; raised?: string; module?: string; args?: string[]; state: string };

let t: TestDatabase;
let h: Harness;
let ids: Awaited<ReturnType<typeof seed>>;

async function python(mode: 'all' | 'db-down'): Promise<Record<string, Outcome>> {
  const args = [AMQP_URL, REDIS_URL, h.queue, JSON.stringify(ids), mode];
  return (await pythonJson('spec/interop/python/smarter_client.py', args, { timeoutMs: 150_000 })) as Record<
    string,
    Outcome
  >;
}

beforeAll(async () => {
  t = await createTestDatabase('interop');
  ids = await seed(t.db);
  await t.db.execute(
    "INSERT INTO account_llmprices (charge_type, provider, model, price) VALUES ('completion', 'openai', 'gpt-test', '0.60')",
  );
  await insertRow(t.db, 'llmhost_llmhostcompute', {
    name: 'gpu',
    user_profile_id: ids.profileId,
    instance_type: 'g6.2xlarge',
    ready_nodes: 2,
    price_per_hour: '1.25',
  });
  const deps: SmarterDeps = { db: t.db, cloud: testCloud() };
  h = await startWorker({
    env: { CELERY_RESULT_BACKEND: REDIS_URL },
    tasks: (queue) => smarterTasksOn(queue, `${queue}.infra`),
    deps,
  });
}, 60_000);
afterAll(async () => {
  await h.stop();
  await t.drop();
});

describe('own wiring: Python Celery (protocol 1) → our worker → MariaDB', () => {
  let out: Record<string, Outcome>;
  beforeAll(async () => {
    out = await python('all');
  }, 160_000);

  test("every writing task succeeds with None, as Smarter's do", () => {
    for (const key of [
      'prompt_history',
      'tool_call',
      'plugin_usage',
      'selector_history',
      'plugin_charge',
      'charge',
      'charge_priced',
      'llmclient_request',
    ]) {
      expect([key, out[key]]).toEqual([key, { ok: null, state: 'SUCCESS' }]);
    }
  });

  // Smarter's prompt/tasks.py creates a Prompt without ip_address and user_profile, NOT NULL in its migration.
  test("create_prompt fails after its retries, as on Smarter's database", () => {
    expect(out.create_prompt).toMatchObject({ raised: 'IntegrityError', state: 'FAILURE' });
  });

  test('the rows are what Django would have written', async () => {
    const [history] = await t.db.select(
      'SELECT request, messages, created_at FROM prompt_prompthistory WHERE prompt_id = ?',
      [ids.promptId],
    );
    expect(JSON.parse(String(history?.messages))).toEqual([
      { role: 'user', content: 'Bonjour, ça va ?' },
      { role: 'assistant', content: 'Oui' },
    ]);
    expect(String(history?.request)).toContain('"content": "Bonjour, \\u00e7a va ?"');
    expect(String(history?.created_at)).toMatch(/\.\d{6}$/);
    const [tool] = await t.db.select('SELECT function_args, plugin_id FROM prompt_prompttoolcall');
    expect([...String(tool?.function_args)]).toHaveLength(255);
    expect(tool?.plugin_id).toBe(String(ids.pluginId));
    expect(await t.db.select('SELECT messages FROM plugin_pluginselectorhistory')).toEqual([
      { messages: '{"input_text": "weather?"}' },
    ]);
    expect(await t.db.select('SELECT session_key FROM llmclient_llmclientrequests')).toEqual([
      { session_key: 'sk-py' },
    ]);
    expect(
      await t.db.select("SELECT llmclient_id FROM prompt_prompt WHERE session_key = 'sk-created-by-python'"),
    ).toEqual([]);
  });

  test('charges: a Decimal total_cost is exact, a missing one is priced per million tokens; aggregate_records then rolls them up', async () => {
    // 609 tokens × $0.60 per million = 0.0003654; Beat's aggregate_records ran last and rolled every charge up.
    expect(await t.db.select('SELECT COUNT(*) n FROM account_charge')).toEqual([{ n: '0' }]);
    const agg = await t.db.select(
      'SELECT resource_locator, records, total_cost FROM account_aggregatedcharges ORDER BY resource_locator',
    );
    expect(agg).toEqual(
      expect.arrayContaining([
        { resource_locator: 'priced', records: 1, total_cost: '0.00037' },
        { resource_locator: 'userprofile-rMTAwMDAwMQx', records: 1, total_cost: '2.50000' },
      ]),
    );
  });

  test("Beat's tasks return what Smarter's return", () => {
    expect(out.aggregate_prompt_history).toEqual({ ok: null, state: 'SUCCESS' });
    expect(out.evaluate_budget_constraints).toEqual({ ok: 0, state: 'SUCCESS' });
    expect(out.charge_llmhost_computes).toEqual({ ok: { gpu: '2.5000' }, state: 'SUCCESS' });
    expect(out.purge_guardrail_events).toEqual({ ok: 0, state: 'SUCCESS' });
    expect(out.aggregate_records).toEqual({ ok: null, state: 'SUCCESS' });
  });

  test("bad arguments: a clear TypeError FAILURE; a missing plugin-usage kwarg is SmarterValueError after Smarter's retries", () => {
    expect(out.bad_missing_arg).toMatchObject({ raised: 'TypeError', state: 'FAILURE' });
    expect(out.bad_missing_arg?.args?.[0]).toMatch(/request.*response.*messages|missing/);
    expect(out.bad_type).toMatchObject({ raised: 'TypeError', state: 'FAILURE' });
    expect(out.bad_type?.args?.[0]).toContain('prompt_tokens');
    expect(out.plugin_usage_incomplete).toMatchObject({ raised: 'SmarterValueError', state: 'FAILURE' });
  });
});

describe('own wiring: a charge that cannot be written', () => {
  test("is retried with Smarter's backoff and ends as FAILURE (ProgrammingError), never as a silent SUCCESS", async () => {
    const name = 'smarter.apps.account.tasks.create_charge';
    const runsBefore = h.worker.processed.get(name) ?? 0;
    await t.db.execute('RENAME TABLE account_charge TO account_charge_away');
    let out: Record<string, Outcome>;
    try {
      out = await python('db-down');
    } finally {
      await t.db.execute('RENAME TABLE account_charge_away TO account_charge');
    }
    // Python without Django re-creates the class by name (exc_module django.db.utils is not importable here).
    expect(out.charge_db_down).toMatchObject({ raised: 'ProgrammingError', state: 'FAILURE' });
    expect(out.charge_db_down?.args?.[0]).toContain('ER_NO_SUCH_TABLE');
    expect((h.worker.processed.get(name) ?? 0) - runsBefore).toBe(4); // the first run and max_retries = 3
    expect(await t.db.select("SELECT id FROM account_charge WHERE resource_locator = 'db-down'")).toHaveLength(0);
  }, 90_000);
});
