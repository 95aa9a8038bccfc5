/**
 * The llmhost app's `charge_llmhost_computes` (smarter/apps/llmhost/tasks/__init__.py), run in-process against a
 * fresh MariaDB database with Smarter's Django tables: one charge each for the compute, its owner and their
 * account, at the compute's price times its ready nodes.
 */
import { insertRow } from '../support/django-rows.js';
import { seededDatabase, smarterTask as task } from '../support/smarter-db.js';
import { call } from '../support/task-context.js';

const world = seededDatabase('llmhostcharge');

const rows = (sql: string, params: unknown[] = []) => world.db.select(sql, params);

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
