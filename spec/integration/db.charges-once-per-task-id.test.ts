/**
 * Charges written once per task id (tasks/db/once.ts): a run of `create_charge` or `charge_llmhost_computes` with
 * a task id whose charges are committed (a late-ack message redelivered after a crash, or its retry) writes no
 * row and returns what Smarter's task returns (smarter/apps/account/tasks.py `create_charge` returns None;
 * smarter/apps/llmhost/tasks/__init__.py `charge_llmhost_computes` returns {compute name: cost}).
 */
import { randomUUID } from 'node:crypto';
import { bindArguments } from '../../lib/registry/args.js';
import { noEvents, type TaskEvents } from '../../lib/worker/events.js';
import { openDatabase } from '../../tasks/db/database.js';
import { ONCE_TABLE } from '../../tasks/db/once.js';
import type { SmarterDeps } from '../../tasks/env/task-env.js';
import { REDIS_URL, celeryMessage, deleteQueues, publishMany, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { insertRow } from '../support/django-rows.js';
import { type Harness, startWorker } from '../support/harness.js';
import { ResultReader } from '../support/results.js';
import { seededDatabase, smarterTask as task, smarterTasksOn } from '../support/smarter-db.js';
import { testContext } from '../support/task-context.js';

const CREATE_CHARGE = 'smarter.apps.account.tasks.create_charge';
const tasksFor = (q: string) => smarterTasksOn(q, `${q}_infra`);
const world = seededDatabase('once');

/** Runs `name` as the worker would run the message with task id `id`. */
async function runAs(id: string, name: string, d: SmarterDeps, kwargs: Record<string, unknown> = {}): Promise<unknown> {
  const tk = task(name);
  return tk.run(bindArguments(tk, [], kwargs), { ...testContext(d, tk.name), id, rootId: id });
}

const charges = async (locator: string) =>
  (
    await world.db.select('SELECT total_cost FROM account_charge WHERE resource_locator = ? ORDER BY id', [locator])
  ).map((r) => r.total_cost);
const charge = (locator: string, cost: string) => ({
  resource_locator: locator,
  charge_type: 'completion',
  prompt_tokens: 3,
  completion_tokens: 4,
  total_tokens: 7,
  total_cost: cost,
});

test('own wiring: create_charge run again with the same task id writes no second row and returns None; another task id writes its own', async () => {
  const id = randomUUID();
  await expect(runAs(id, CREATE_CHARGE, world.deps, charge('once/a', '1.25'))).resolves.toBeNull();
  await expect(runAs(id, CREATE_CHARGE, world.deps, charge('once/a', '1.25'))).resolves.toBeNull();
  expect(await charges('once/a')).toEqual(['1.25000000']);
  await runAs(randomUUID(), CREATE_CHARGE, world.deps, charge('once/a', '1.25'));
  expect(await charges('once/a')).toEqual(['1.25000000', '1.25000000']);
  const markers = await world.db.select(`SELECT task_name, effect FROM ${ONCE_TABLE} WHERE task_id = ?`, [id]);
  expect(markers).toEqual([{ task_name: CREATE_CHARGE, effect: '' }]);
});

test('own wiring: two runs of one create_charge task id at the same time, in two workers (two pools): one row', async () => {
  const other = openDatabase(world.database.config);
  try {
    const id = randomUUID();
    const both = await Promise.all([
      runAs(id, CREATE_CHARGE, world.deps, charge('once/b', '2.5')),
      runAs(id, CREATE_CHARGE, { ...world.deps, db: other }, charge('once/b', '2.5')),
    ]);
    expect(both).toEqual([null, null]);
    expect(await charges('once/b')).toEqual(['2.50000000']);
  } finally {
    await other.close();
  }
});

test('own wiring: a group commit of 200 create_charge, 100 of them task ids already charged: only the 100 new rows are written', async () => {
  const done = Array.from({ length: 100 }, () => randomUUID());
  await Promise.all(done.map((id, i) => runAs(id, CREATE_CHARGE, world.deps, charge('once/c', `${i}.01`))));
  const fresh = Array.from({ length: 100 }, () => randomUUID());
  const again = [...done.map((id, i) => [id, i] as const), ...fresh.map((id, i) => [id, 100 + i] as const)];
  await Promise.all(again.map(([id, i]) => runAs(id, CREATE_CHARGE, world.deps, charge('once/c', `${i}.01`))));
  const r = await world.db.select(
    "SELECT COUNT(*) n, SUM(total_cost) total FROM account_charge WHERE resource_locator = 'once/c'",
  );
  // 0.01 × 200 + (0 + 1 + … + 199)
  expect(r[0]).toEqual({ n: '200', total: '19902.00000000' });
});

test('own wiring: charge_llmhost_computes run again with the same task id writes none of its three charges and returns the same {name: cost}', async () => {
  const compute = await insertRow(world.db, 'llmhost_llmhostcompute', {
    name: 'gpu-once',
    user_profile_id: world.ids.profileId,
    instance_type: 'g6.2xlarge',
    ready_nodes: 2,
    price_per_hour: '1.25',
  });
  const count = async () =>
    Number((await world.db.select("SELECT COUNT(*) n FROM account_charge WHERE charge_type = 'compute'"))[0]?.n);
  try {
    const id = randomUUID();
    const first = await runAs(id, 'smarter.apps.llmhost.tasks.charge_llmhost_computes', world.deps);
    expect(first).toEqual({ 'gpu-once': '2.5000' });
    expect(await count()).toBe(3);
    await expect(runAs(id, 'smarter.apps.llmhost.tasks.charge_llmhost_computes', world.deps)).resolves.toEqual(first);
    expect(await count()).toBe(3);
    // The next hour's run is another task id: charged again.
    await runAs(randomUUID(), 'smarter.apps.llmhost.tasks.charge_llmhost_computes', world.deps);
    expect(await count()).toBe(6);
  } finally {
    await world.db.execute('UPDATE llmhost_llmhostcompute SET ready_nodes = 0 WHERE id = ?', [compute]);
  }
});

describe('own wiring: through a worker', () => {
  let h: Harness | undefined;
  afterAll(async () => {
    await h?.app.shutdown();
    if (h) await deleteQueues([h.queue, `${h.queue}.dead_letter`]);
  });

  test('the same create_charge message delivered twice (same task id) writes one row; both deliveries end SUCCESS with None', async () => {
    const queue = uniqueName('q');
    let succeeded = 0;
    const events: TaskEvents = { ...noEvents, succeeded: () => void succeeded++ };
    h = await startWorker({
      queue,
      tasks: tasksFor,
      deps: world.deps,
      events,
      env: { CELERY_RESULT_BACKEND: REDIS_URL, CELERY_TASK_ACKS_LATE: '1' },
    });
    const results = new ResultReader();
    try {
      const id = randomUUID();
      const message = celeryMessage(CREATE_CHARGE, charge('once/worker', '3.75'), id);
      await publishMany(queue, [message]);
      expect(await results.ready(id, 30_000)).toMatchObject({ status: 'SUCCESS', result: null });
      await publishMany(queue, [message]);
      await waitFor(async () => succeeded === 2, 30_000);
      expect(await charges('once/worker')).toEqual(['3.75000000']);
    } finally {
      await results.close();
    }
  }, 60_000);
});
