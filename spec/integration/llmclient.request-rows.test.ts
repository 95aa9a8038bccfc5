/**
 * The llmclient app's one operational task, `create_llmclient_request`, run in-process against a fresh MariaDB
 * database with Smarter's Django tables: the request row and its session key, and an unknown LLMClient retried.
 */
import { seededDatabase, smarterTask as task } from '../support/smarter-db.js';
import { call } from '../support/task-context.js';

const world = seededDatabase('llmreq');

const rows = (sql: string, params: unknown[] = []) => world.db.select(sql, params);

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
