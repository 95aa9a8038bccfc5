/**
 * The account app's `create_charge` (smarter/apps/account/tasks.py), run in-process against a fresh MariaDB
 * database with Smarter's Django tables: exact decimals, prices per million tokens, arguments named when wrong,
 * and database errors raised so that they are retried.
 */
import { PyDecimal } from '../../lib/protocol/values.js';
import { seededDatabase, smarterTask as task } from '../support/smarter-db.js';
import { call } from '../support/task-context.js';

const world = seededDatabase('account');

const rows = (sql: string, params: unknown[] = []) => world.db.select(sql, params);

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
