/**
 * The prompt app's tasks (smarter/apps/prompt/tasks.py), run in-process against a fresh MariaDB database with
 * Smarter's Django tables: the rows Django would have written, and each of Smarter's outcomes (logged and dropped,
 * raised and retried).
 */
import { seededDatabase, smarterTask as task } from '../support/smarter-db.js';
import { call } from '../support/task-context.js';

const world = seededDatabase('prompt');

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

describe('own wiring: aggregate_prompt_history', () => {
  test("returns None, as Smarter's no-op does", async () => {
    await expect(call(task('aggregate_prompt_history'), world.deps)).resolves.toBeNull();
  });
});
