/**
 * charge_llmhost_computes against MariaDB, as Smarter's task does it (smarter/apps/llmhost/tasks/__init__.py):
 * each charge through `Charge.objects.create`, whose `new_charge_created` receiver evaluates the charged
 * resource's budgets, and each resource in its own try/except.
 */
import { llmhostTasks } from '../../tasks/llmhost/index.js';
import { recordLocator } from '../../tasks/db/django.js';
import { CheckRunner } from '../support/check-runner.js';
import { type LogLine, recordingLogger } from '../support/logs.js';
import { type LlmhostWorld, llmhostWorldForFile } from '../support/llmhost-world.js';

const CHARGE = 'smarter.apps.llmhost.tasks.charge_llmhost_computes';
let w: LlmhostWorld;
llmhostWorldForFile((world) => (w = world));

async function charge(): Promise<{ result: unknown; lines: LogLine[] }> {
  const lines: LogLine[] = [];
  const r = new CheckRunner(llmhostTasks(w.env), w.deps, recordingLogger(lines)) as CheckRunner<unknown>;
  r.send(CHARGE);
  const run = await r.runOne(r.pending.shift() ?? { id: '', name: CHARGE, args: [], kwargs: {}, countdown: 0 });
  expect(run.error).toBeUndefined();
  return { result: run.result, lines };
}

async function budget(name: string, locator: string, absoluteLimit: string): Promise<void> {
  const b = await w.t.db.execute(
    `INSERT INTO account_budget (created_at, updated_at, name, description, version, annotations, duration, periodic_limit, absolute_limit, action, message, period, unit, warning_threshold)
     VALUES (UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), ?, '', '1.0.0', '[]', 0, 0, ?, 'block', '', 'month', 'cost', 80)`,
    [name, absoluteLimit],
  );
  await w.t.db.execute(
    `INSERT INTO account_resourceconstraint (created_at, updated_at, resource_locator, budget_id, is_active, start_date, warned_at, exceeded_at)
     VALUES (UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), ?, ?, 1, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, NULL, NULL)`,
    [locator, b.insertId],
  );
}

const locks = async (locator: string) =>
  (await w.t.db.select('SELECT reason FROM account_resourcelock WHERE resource_locator = ?', [locator])).length;

test("own wiring: the charged compute's budget is evaluated right after its charge: a block budget it exceeds locks it at once, not at the next hourly evaluation", async () => {
  const id = await w.newCompute({ name: 'gpu-charge-budget', price: '1.2500' });
  await w.t.db.execute('UPDATE llmhost_llmhostcompute SET ready_nodes = 2 WHERE id = ?', [id]);
  const locator = recordLocator('LLMHostCompute', id);
  await budget('compute-charge-budget', locator, '2.00');
  const { result } = await charge();
  expect(result).toMatchObject({ 'gpu-charge-budget': '2.5000' });
  expect(await locks(locator)).toBe(1);
  await w.t.db.execute('UPDATE llmhost_llmhostcompute SET ready_nodes = 0 WHERE id = ?', [id]);
});

test("own wiring: a charge that fails is logged and the compute's other charges are still made, each committed on its own", async () => {
  const id = await w.newCompute({ name: 'gpu-charge-fail', price: '0.5000' });
  await w.t.db.execute('UPDATE llmhost_llmhostcompute SET ready_nodes = 1 WHERE id = ?', [id]);
  const compute = recordLocator('LLMHostCompute', id);
  await w.t.db.execute(
    `CREATE TRIGGER refuse_compute_charge BEFORE INSERT ON account_charge FOR EACH ROW
       IF NEW.resource_locator = '${compute}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by the test'; END IF`,
  );
  try {
    const before = (await w.t.db.select("SELECT COUNT(*) AS n FROM account_charge WHERE charge_type = 'compute'"))[0]
      ?.n;
    const { result, lines } = await charge();
    expect(result).toMatchObject({ 'gpu-charge-fail': '0.5000' });
    const after = (await w.t.db.select("SELECT COUNT(*) AS n FROM account_charge WHERE charge_type = 'compute'"))[0]?.n;
    expect(Number(after) - Number(before)).toBe(2);
    expect(await w.t.db.select('SELECT id FROM account_charge WHERE resource_locator = ?', [compute])).toEqual([]);
    expect(lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      expect.stringMatching(
        new RegExp(`^charge_llmhost_computes\\(\\) failed to charge ${compute}: .*refused by the test`),
      ),
    ]);
  } finally {
    await w.t.db.execute('DROP TRIGGER refuse_compute_charge');
  }
});
