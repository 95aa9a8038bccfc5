/**
 * Every operational task, run in-process against a fresh MariaDB database with Smarter's Django tables:
 * the rows Django would have written, and each of Smarter's outcomes (logged and dropped, raised and retried).
 */
import { PyDecimal } from '../../lib/protocol/values.js';
import { insertRow } from '../support/django-rows.js';
import { seededDatabase, smarterTask as task } from '../support/smarter-db.js';
import { call } from '../support/task-context.js';

const world = seededDatabase('ops');

const rows = (sql: string, params: unknown[] = []) => world.db.select(sql, params);

describe('own wiring: create_prompt_history', () => {
  test('writes the row as Django would: JSON that json.loads reads back, UTC timestamps with microseconds', async () => {
    const request = { model: 'gpt-4o', messages: [{ role: 'user', content: 'héllo' }] };
    const response = { id: 'chatcmpl-1', usage: { total_tokens: 12 } };
    const messages = [
      { role: 'user', content: 'héllo' },
      { role: 'assistant', content: 'hi' },
    ];
    await expect(
      call(task('create_prompt_history'), world.deps, [world.ids.promptId, request, response, messages]),
    ).resolves.toBeNull();
    const [row] = await rows('SELECT * FROM prompt_prompthistory WHERE prompt_id = ?', [world.ids.promptId]);
    expect(JSON.parse(String(row?.request))).toEqual(request);
    expect(JSON.parse(String(row?.messages))).toEqual(messages);
    expect(String(row?.request)).toContain('"h\\u00e9llo"');
    expect(String(row?.created_at)).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/);
    const age = Date.now() - new Date(`${String(row?.created_at).replace(' ', 'T')}Z`).getTime();
    expect(Math.abs(age)).toBeLessThan(10_000);
  });

  test('a prompt that does not exist is logged and dropped, not retried (as in Smarter)', async () => {
    await expect(call(task('create_prompt_history'), world.deps, [999999, {}, {}, []])).resolves.toBeNull();
    expect(await rows('SELECT id FROM prompt_prompthistory WHERE prompt_id = 999999')).toHaveLength(0);
  });

  test('wrong arguments are a clear TypeError naming them', async () => {
    await expect(
      call(task('create_prompt_history'), world.deps, [world.ids.promptId, {}, {}, [], 'extra']),
    ).rejects.toMatchObject({ pyType: 'TypeError' });
    await expect(
      call(task('create_prompt_history'), world.deps, [], {
        prompt_id: 'x',
        request: {},
        response: {},
        messages: [],
        nope: 1,
      }),
    ).rejects.toThrow(/prompt_id[\s\S]*nope|nope[\s\S]*prompt_id/);
  });
});

describe('own wiring: create_prompt_tool_call_history', () => {
  const name = 'create_prompt_tool_call_history';
  test('a missing prompt or plugin raises SmarterValueError, which Smarter retries', async () => {
    await expect(call(task(name), world.deps, [999999, null, 'f', '{}', {}, {}])).rejects.toMatchObject({
      pyType: 'SmarterValueError',
    });
    await expect(call(task(name), world.deps, [world.ids.promptId, 999999, 'f', '{}', {}, {}])).rejects.toMatchObject({
      pyType: 'SmarterValueError',
    });
  });

  test('a tool call without a plugin is stored with plugin_id NULL', async () => {
    await call(task(name), world.deps, [
      world.ids.promptId,
      null,
      'get_weather',
      '{"city": "Paris"}',
      { a: 1 },
      { b: 2 },
    ]);
    const [row] = await rows("SELECT * FROM prompt_prompttoolcall WHERE function_name = 'get_weather'");
    expect(row).toMatchObject({ plugin_id: null, function_args: '{"city": "Paris"}', request: '{"a": 1}' });
  });

  test('function_args longer than its VARCHAR(255) no longer fails the row: it is stored cut to 255 characters', async () => {
    const args = JSON.stringify({ q: 'x'.repeat(1000) });
    await call(task(name), world.deps, [world.ids.promptId, world.ids.pluginId, 'search', args, {}, {}]);
    const [row] = await rows("SELECT function_args FROM prompt_prompttoolcall WHERE function_name = 'search'");
    expect([...String(row?.function_args)]).toHaveLength(255);
    expect(String(row?.function_args)).toBe(`${args.slice(0, 254)}…`);
  });
});

describe('own wiring: create_prompt_plugin_usage', () => {
  test.each([[{}], [{ prompt_id: 1 }], [{ prompt_id: 1, plugin_id: 1 }], [{ plugin_id: 1, input_text: 'x' }]])(
    'every incomplete set of kwargs raises SmarterValueError (%j)',
    async (kwargs) => {
      await expect(call(task('create_prompt_plugin_usage'), world.deps, [], kwargs)).rejects.toMatchObject({
        pyType: 'SmarterValueError',
      });
    },
  );

  test('a complete call stores the usage', async () => {
    await call(task('create_prompt_plugin_usage'), world.deps, [], {
      prompt_id: world.ids.promptId,
      plugin_id: world.ids.pluginId,
      input_text: 'weather in Paris?',
    });
    expect(
      await rows('SELECT input_text FROM prompt_promptpluginusage WHERE prompt_id = ?', [world.ids.promptId]),
    ).toEqual([{ input_text: 'weather in Paris?' }]);
  });
});

describe('own wiring: create_plugin_selector_history', () => {
  const name = 'create_plugin_selector_history';
  test('by user_id: stores {"input_text": …} as messages, with the search term and session key', async () => {
    await call(task(name), world.deps, [], {
      plugin_id: world.ids.pluginId,
      user_id: world.ids.userId,
      input_text: 'weather?',
      messages: [{ role: 'user' }],
      search_term: 'weather',
      session_key: 'sk-1',
    });
    const [row] = await rows("SELECT * FROM plugin_pluginselectorhistory WHERE session_key = 'sk-1'");
    expect(row).toMatchObject({
      plugin_selector_id: String(world.ids.selectorId),
      search_term: 'weather',
      messages: '{"input_text": "weather?"}',
    });
  });

  test('by user_profile_id without input_text: stores the messages', async () => {
    await call(task(name), world.deps, [], {
      plugin_id: world.ids.pluginId,
      user_profile_id: world.ids.profileId,
      messages: [{ role: 'user', content: 'hi' }],
      session_key: 'sk-2',
    });
    const [row] = await rows("SELECT messages FROM plugin_pluginselectorhistory WHERE session_key = 'sk-2'");
    expect(JSON.parse(String(row?.messages))).toEqual([{ role: 'user', content: 'hi' }]);
  });

  test('a deleted user is a warning and nothing is stored; an unknown plugin is logged and dropped', async () => {
    await expect(
      call(task(name), world.deps, [], { plugin_id: world.ids.pluginId, user_id: 999999, session_key: 'sk-3' }),
    ).resolves.toBeNull();
    await expect(
      call(task(name), world.deps, [], { plugin_id: 999999, user_id: world.ids.userId, session_key: 'sk-3' }),
    ).resolves.toBeNull();
    expect(await rows("SELECT id FROM plugin_pluginselectorhistory WHERE session_key = 'sk-3'")).toHaveLength(0);
  });

  test('a user without a profile raises SmarterPluginError (retried)', async () => {
    const u = await world.db.execute("INSERT INTO auth_user (username) VALUES ('noprofile')");
    await expect(
      call(task(name), world.deps, [], { plugin_id: world.ids.pluginId, user_id: u.insertId }),
    ).rejects.toMatchObject({ pyType: 'SmarterPluginError' });
  });
});

describe('own wiring: create_plugin_charge', () => {
  test('is a no-op, as in Smarter', async () => {
    await expect(call(task('create_plugin_charge'), world.deps, [1, 2], { a: 1 })).resolves.toBeNull();
  });
});

describe('own wiring: create_prompt', () => {
  // Smarter's prompt/tasks.py: Prompt.objects.create(session_key=…, llmclient=…) leaves Prompt.ip_address and
  // Prompt.user_profile None, both NOT NULL in prompt/migrations/0001_initial.py: its database refuses the row.
  test("fails as on Smarter's database: the row Django writes has no ip_address nor user_profile", async () => {
    await expect(call(task('create_prompt'), world.deps, ['session-xyz', world.ids.llmclientId])).rejects.toMatchObject(
      { pyType: 'IntegrityError', sqlCode: 'ER_BAD_NULL_ERROR' },
    );
    expect(await rows("SELECT id FROM prompt_prompt WHERE session_key = 'session-xyz'")).toEqual([]);
  });
});

describe('own wiring: create_charge', () => {
  const name = 'create_charge';
  const base = { charge_type: 'completion', prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

  test("a Decimal arriving as kombu's marker is stored exactly; extra kwargs are ignored as in Smarter", async () => {
    await call(task(name), world.deps, [], {
      ...base,
      resource_locator: 'charge-dec',
      total_cost: new PyDecimal('2.12345678'),
      session_key: 'ignored',
    });
    await call(task(name), world.deps, [], { ...base, resource_locator: 'charge-str', total_cost: '0.25' });
    expect(
      await rows(
        "SELECT total_cost FROM account_charge WHERE resource_locator IN ('charge-dec', 'charge-str') ORDER BY id",
      ),
    ).toEqual([{ total_cost: '2.12345678' }, { total_cost: '0.25000000' }]);
  });

  // Smarter's LLMPrices.cost_of (smarter/smarter/apps/account/models/llm_prices.py) and its test_llm_prices_cost_of.
  test('without total_cost, tokens are priced per million from account_llmprices; provider case does not matter; no price costs nothing', async () => {
    await world.db.execute(
      "INSERT INTO account_llmprices (charge_type, provider, model, price) VALUES ('completion', 'openai', 'gpt-test', '2.5')",
    );
    await call(task(name), world.deps, [], {
      ...base,
      total_tokens: 200000,
      resource_locator: 'charge-priced',
      provider: 'OpenAI',
      model: 'gpt-test',
    });
    await call(task(name), world.deps, [], {
      ...base,
      resource_locator: 'charge-unpriced',
      provider: 'openai',
      model: 'nope',
    });
    expect(
      await rows(
        "SELECT resource_locator, total_cost FROM account_charge WHERE resource_locator LIKE 'charge-%priced' ORDER BY id",
      ),
    ).toEqual([
      { resource_locator: 'charge-priced', total_cost: '0.50000000' },
      { resource_locator: 'charge-unpriced', total_cost: '0.00000000' },
    ]);
  });

  test('bad arguments fail clearly, naming each field', async () => {
    await expect(
      call(task(name), world.deps, [], { charge_type: 'completion', prompt_tokens: 'ten', total_tokens: 1 }),
    ).rejects.toThrow(/resource_locator[\s\S]*prompt_tokens[\s\S]*completion_tokens/);
  });

  test('a database error is raised (so it is retried), never swallowed', async () => {
    await world.db.execute('RENAME TABLE account_charge TO account_charge_away');
    try {
      await expect(
        call(task(name), world.deps, [], { ...base, resource_locator: 'charge-lost' }),
      ).rejects.toMatchObject({ pyType: 'ProgrammingError', pyModule: 'django.db.utils', sqlCode: 'ER_NO_SUCH_TABLE' });
    } finally {
      await world.db.execute('RENAME TABLE account_charge_away TO account_charge');
    }
  });
});

describe('own wiring: create_llmclient_request', () => {
  const name = 'create_llmclient_request';
  test('stores the request and its session key', async () => {
    await call(task(name), world.deps, [world.ids.llmclientId, { session_key: 'sk-req', prompt: 'hi' }]);
    expect(
      await rows("SELECT request, is_aggregation FROM llmclient_llmclientrequests WHERE session_key = 'sk-req'"),
    ).toEqual([{ request: '{"session_key": "sk-req", "prompt": "hi"}', is_aggregation: 0 }]);
  });

  test('an unknown LLMClient raises DoesNotExist (retried, as in Smarter); a request without a session key is kept with NULL', async () => {
    await expect(call(task(name), world.deps, [999999, {}])).rejects.toMatchObject({ pyType: 'DoesNotExist' });
    await call(task(name), world.deps, [world.ids.llmclientId, { prompt: 'no key' }]);
    expect(
      await rows('SELECT session_key FROM llmclient_llmclientrequests WHERE request LIKE ?', ['%no key%']),
    ).toEqual([{ session_key: null }]);
  });
});

describe('own wiring: charge_llmhost_computes', () => {
  test('2 ready nodes at 1.25/hour: returns {"name": "2.5000"} and charges the compute, its owner and their account', async () => {
    const c = {
      insertId: await insertRow(world.db, 'llmhost_llmhostcompute', {
        name: 'gpu-pool',
        user_profile_id: world.ids.profileId,
        instance_type: 'g6.2xlarge',
        ready_nodes: 2,
        price_per_hour: '1.25',
      }),
    };
    await insertRow(world.db, 'llmhost_llmhostcompute', {
      name: 'idle',
      user_profile_id: world.ids.profileId,
      instance_type: 'g6.2xlarge',
      ready_nodes: 0,
      price_per_hour: '9.00',
    });
    await insertRow(world.db, 'llmhost_llmhostcompute', {
      name: 'free',
      user_profile_id: world.ids.profileId,
      instance_type: 'g6.2xlarge',
      ready_nodes: 3,
      price_per_hour: null,
    });
    await expect(call(task('charge_llmhost_computes'), world.deps)).resolves.toEqual({ 'gpu-pool': '2.5000' });
    const charges = await rows(
      "SELECT resource_locator, charge_type, total_tokens, total_cost FROM account_charge WHERE charge_type = 'compute' ORDER BY id",
    );
    const b64 = (n: number) => Buffer.from(String(n + 1_000_000)).toString('base64url');
    expect(charges).toEqual([
      {
        resource_locator: `llmhostcompute-r${b64(c.insertId)}x`,
        charge_type: 'compute',
        total_tokens: 0,
        total_cost: '2.50000000',
      },
      {
        resource_locator: `userprofile-r${b64(world.ids.profileId)}x`,
        charge_type: 'compute',
        total_tokens: 0,
        total_cost: '2.50000000',
      },
      {
        resource_locator: `account-r${b64(world.ids.accountId)}x`,
        charge_type: 'compute',
        total_tokens: 0,
        total_cost: '2.50000000',
      },
    ]);
  });
});

describe('own wiring: purge_guardrail_events', () => {
  test('deletes events older than `days`, except flagged or escalated ones nobody reviewed; returns the count', async () => {
    const old = 'UTC_TIMESTAMP(6) - INTERVAL 100 DAY';
    await world.db.execute(
      `INSERT INTO guardrail_guardrailevent (created_at, disposition, reviewed) VALUES
        (${old}, 'allowed', 0), (${old}, 'flagged', 1), (${old}, 'flagged', 0), (${old}, 'ESCALATED', 0), (UTC_TIMESTAMP(6), 'allowed', 0)`,
    );
    await expect(call(task('purge_guardrail_events'), world.deps)).resolves.toBe(2);
    await expect(call(task('purge_guardrail_events'), world.deps, [200])).resolves.toBe(0);
    expect(await rows('SELECT disposition FROM guardrail_guardrailevent ORDER BY id')).toEqual([
      { disposition: 'flagged' },
      { disposition: 'ESCALATED' },
      { disposition: 'allowed' },
    ]);
  });
});

describe('own wiring: aggregate_prompt_history', () => {
  test("returns None, as Smarter's no-op does", async () => {
    await expect(call(task('aggregate_prompt_history'), world.deps)).resolves.toBeNull();
  });
});
