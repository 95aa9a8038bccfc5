/**
 * The plugin app's tasks (smarter/apps/plugin/tasks.py), run in-process against a fresh MariaDB database with
 * Smarter's Django tables: the selector history row Django would have written, and Smarter's outcomes.
 */
import { seededDatabase, smarterTask as task } from '../support/smarter-db.js';
import { call } from '../support/task-context.js';

const world = seededDatabase('plugin');

const rows = (sql: string, params: unknown[] = []) => world.db.select(sql, params);

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
