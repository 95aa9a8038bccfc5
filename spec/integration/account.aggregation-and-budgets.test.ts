/**
 * Charges, their aggregation and budgets on the real MariaDB: aggregation is exact, transactional and safe to
 * run twice or at once; budgets warn, lock and release as Smarter's budget models describe.
 */
import { Dec } from '../../tasks/db/decimal.js';
import { sqlTime } from '../../tasks/account/budget-periods.js';
import { aggregateCharges, rollUpLastMonth } from '../../tasks/account/aggregate-records.js';
import { evaluateBudgets, resourceLockMessage } from '../../tasks/account/budgets.js';
import { type TestDatabase, createTestDatabase } from '../support/db.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase('bill');
});
afterAll(async () => t.drop());
beforeEach(async () => {
  for (const table of [
    'account_resourcelock',
    'account_resourceconstraint',
    'account_budget',
    'account_charge',
    'account_aggregatedcharges',
  ]) {
    await t.db.execute(`DELETE FROM ${table}`);
  }
});

async function charge(locator: string, cost: string, tokens = 0, createdAt = 'UTC_TIMESTAMP(6)'): Promise<void> {
  await t.db.execute(
    `INSERT INTO account_charge (resource_locator, charge_type, prompt_tokens, completion_tokens, total_tokens, total_cost, created_at, updated_at)
     VALUES (?, 'completion', ?, 0, ?, ?, ${createdAt}, ${createdAt})`,
    [locator, tokens, tokens, cost],
  );
}

async function totals(table: string): Promise<{ cost: string; tokens: string; records: string }> {
  const [r] = await t.db.select(
    `SELECT COALESCE(SUM(total_cost), 0) cost, COALESCE(SUM(total_tokens), 0) tokens, ${table === 'account_charge' ? 'COUNT(*)' : 'COALESCE(SUM(records), 0)'} records FROM ${table}`,
  );
  return {
    cost: Dec.of(String(r?.cost)).quantize(5).toString(),
    tokens: String(r?.tokens),
    records: String(r?.records),
  };
}

describe('aggregate_records', () => {
  test('rolls charges up per resource, type and hour, exactly, and deletes the rows it rolled up', async () => {
    await charge('a', '0.10000001', 10, "'2026-11-30 09:15:00.000001'");
    await charge('a', '0.20000002', 20, "'2026-11-30 09:45:00'");
    await charge('a', '1.5', 5, "'2026-11-30 10:01:00'");
    await charge('b', '0.00001', 1, "'2026-11-30 09:30:00'");
    await expect(aggregateCharges(t.db)).resolves.toBe(4);
    const agg = await t.db.select(
      'SELECT year, month, day, hour, resource_locator, records, total_tokens, total_cost FROM account_aggregatedcharges ORDER BY resource_locator, hour',
    );
    expect(agg).toEqual([
      {
        year: 2026,
        month: 11,
        day: 30,
        hour: 9,
        resource_locator: 'a',
        records: 2,
        total_tokens: 30,
        total_cost: '0.30000',
      },
      {
        year: 2026,
        month: 11,
        day: 30,
        hour: 10,
        resource_locator: 'a',
        records: 1,
        total_tokens: 5,
        total_cost: '1.50000',
      },
      {
        year: 2026,
        month: 11,
        day: 30,
        hour: 9,
        resource_locator: 'b',
        records: 1,
        total_tokens: 1,
        total_cost: '0.00001',
      },
    ]);
    expect(await t.db.select('SELECT id FROM account_charge')).toHaveLength(0);
  });

  test('running it twice changes nothing the second time', async () => {
    await charge('a', '1', 1);
    await aggregateCharges(t.db);
    const first = await t.db.select('SELECT * FROM account_aggregatedcharges');
    await expect(aggregateCharges(t.db)).resolves.toBe(0);
    expect(await t.db.select('SELECT * FROM account_aggregatedcharges')).toEqual(first);
  });

  test('two runs at once while charges keep arriving: every charge is counted exactly once', async () => {
    const values = Array.from(
      { length: 2000 },
      (_, i) =>
        `('r${i % 7}', 'completion', 1, 0, 1, '0.00100000', UTC_TIMESTAMP(6) - INTERVAL ${i % 5} HOUR, UTC_TIMESTAMP(6))`,
    );
    await t.db.execute(
      `INSERT INTO account_charge (resource_locator, charge_type, prompt_tokens, completion_tokens, total_tokens, total_cost, created_at, updated_at) VALUES ${values.join(', ')}`,
    );
    const late = (async () => {
      for (let i = 0; i < 50; i += 1) await charge(`late${i % 3}`, '0.01', 1);
    })();
    const [n1, n2] = await Promise.all([aggregateCharges(t.db), aggregateCharges(t.db), late]);
    const n3 = await aggregateCharges(t.db);
    expect((n1 ?? 0) + (n2 ?? 0) + n3).toBe(2050);
    expect(await totals('account_aggregatedcharges')).toEqual({ cost: '2.50000', tokens: '2050', records: '2050' });
    expect(await totals('account_charge')).toEqual({ cost: '0.00000', tokens: '0', records: '0' });
  });

  test('the month-end pass rolls last month up per day, fills the NOT NULL hour with 0, and is idempotent', async () => {
    const now = new Date(Date.UTC(2026, 11, 1, 0, 30));
    const ins = (day: number, hour: number, records: number, cost: string) =>
      t.db.execute(
        `INSERT INTO account_aggregatedcharges (year, month, day, hour, resource_locator, charge_type, records, prompt_tokens, completion_tokens, total_tokens, total_cost)
         VALUES (2026, 11, ?, ?, 'a', 'completion', ?, 0, 0, ?, ?)`,
        [day, hour, records, records, cost],
      );
    await ins(30, 3, 2, '0.10000');
    await ins(30, 17, 3, '0.20001');
    await ins(29, 5, 1, '1.00000');
    await ins(1, 0, 9, '9.00000'); // already one row at hour 0: left as it is
    await expect(rollUpLastMonth(t.db, now)).resolves.toBe(3);
    const rows = await t.db.select(
      'SELECT day, hour, records, total_tokens, total_cost FROM account_aggregatedcharges ORDER BY day',
    );
    expect(rows).toEqual([
      { day: 1, hour: 0, records: 9, total_tokens: 9, total_cost: '9.00000' },
      { day: 29, hour: 0, records: 1, total_tokens: 1, total_cost: '1.00000' },
      { day: 30, hour: 0, records: 5, total_tokens: 5, total_cost: '0.30001' },
    ]);
    await expect(rollUpLastMonth(t.db, now)).resolves.toBe(0);
  });
});

describe('evaluate_budget_constraints', () => {
  let n = 0;
  async function budget(
    fields: Record<string, unknown>,
    locator: string,
    start = 'UTC_TIMESTAMP(6)',
  ): Promise<{ budgetId: number; constraintId: number }> {
    n += 1;
    // Every NOT NULL column, with Django's Python defaults: Smarter's table has no database defaults.
    const cols = {
      name: `budget_${n}`,
      duration: 0,
      periodic_limit: '0.00',
      absolute_limit: '0.00',
      action: 'block',
      message: '',
      period: 'month',
      unit: 'cost',
      warning_threshold: 80,
      ...fields,
    };
    const b = await t.db.execute(
      `INSERT INTO account_budget (${Object.keys(cols).join(', ')}, created_at, updated_at) VALUES (${Object.keys(cols)
        .map(() => '?')
        .join(', ')}, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
      Object.values(cols),
    );
    const c = await t.db.execute(
      `INSERT INTO account_resourceconstraint (resource_locator, budget_id, is_active, start_date, created_at, updated_at) VALUES (?, ?, 1, ${start}, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
      [locator, b.insertId],
    );
    return { budgetId: b.insertId, constraintId: c.insertId };
  }
  const locks = (locator: string) =>
    t.db.select('SELECT expiration_date, reason FROM account_resourcelock WHERE resource_locator = ?', [locator]);
  const constraint = async (id: number) =>
    (await t.db.select('SELECT exceeded_at, warned_at FROM account_resourceconstraint WHERE id = ?', [id]))[0];

  test('periodic cost limit: warns at the threshold, locks at the limit until the period ends, releases when raised', async () => {
    const { budgetId, constraintId } = await budget(
      { periodic_limit: '1.00', message: 'Your allowance is used up.' },
      'u1',
    );
    await charge('u1', '0.50');
    await expect(evaluateBudgets(t.db)).resolves.toBe(0);
    expect((await constraint(constraintId))?.warned_at).toBeNull();
    await charge('u1', '0.35');
    await evaluateBudgets(t.db);
    const warned = (await constraint(constraintId))?.warned_at;
    expect(warned).not.toBeNull();
    await charge('u1', '0.20');
    await expect(evaluateBudgets(t.db)).resolves.toBe(1);
    const [lock] = await locks('u1');
    const now = new Date();
    expect(lock?.expiration_date).toBe(sqlTime(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))));
    expect(lock?.reason).toContain('monthly limit of $1.00');
    // Smarter's ResourceLock.message shows the budget's message; the reason is the limit text alone.
    expect(lock?.reason).not.toContain('Your allowance is used up.');
    await expect(resourceLockMessage(t.db, 'u1')).resolves.toBe('Your allowance is used up.');
    expect((await constraint(constraintId))?.warned_at).toBe(warned);

    await expect(evaluateBudgets(t.db)).resolves.toBe(1);
    expect(await locks('u1')).toHaveLength(1);

    await t.db.execute("UPDATE account_budget SET periodic_limit = '5.00' WHERE id = ?", [budgetId]);
    await expect(evaluateBudgets(t.db)).resolves.toBe(0);
    expect(await locks('u1')).toHaveLength(0);
    await expect(resourceLockMessage(t.db, 'u1')).resolves.toBeNull();
    // Smarter sets exceeded_at when a limit is exceeded and never clears it.
    expect((await constraint(constraintId))?.exceeded_at).not.toBeNull();
  });

  test('an absolute token limit locks with no expiry; charges before the start date do not count', async () => {
    await charge('u2', '0', 600, 'UTC_TIMESTAMP(6) - INTERVAL 100 DAY');
    await budget({ unit: 'tokens', absolute_limit: '1000' }, 'u2', 'UTC_TIMESTAMP(6) - INTERVAL 90 DAY');
    await charge('u2', '0', 500, 'UTC_TIMESTAMP(6) - INTERVAL 10 DAY');
    await expect(evaluateBudgets(t.db)).resolves.toBe(0);
    await charge('u2', '0', 500);
    await expect(evaluateBudgets(t.db)).resolves.toBe(1);
    const [lock] = await locks('u2');
    expect(lock?.expiration_date).toBeNull();
    expect(lock?.reason).toContain('1,000 tokens');
  });

  test('aggregated charges count too, by their hour', async () => {
    await budget({ period: 'day', periodic_limit: '1.00' }, 'u3', 'UTC_TIMESTAMP(6) - INTERVAL 2 DAY');
    const now = new Date();
    await t.db.execute(
      `INSERT INTO account_aggregatedcharges (year, month, day, hour, resource_locator, charge_type, records, prompt_tokens, completion_tokens, total_tokens, total_cost)
       VALUES (?, ?, ?, ?, 'u3', 'completion', 4, 0, 0, 0, '1.00000')`,
      [now.getUTCFullYear(), now.getUTCMonth() + 1, now.getUTCDate(), now.getUTCHours()],
    );
    await expect(evaluateBudgets(t.db)).resolves.toBe(1);
  });

  test('a warn-only budget records the excess but never locks', async () => {
    const { constraintId } = await budget({ periodic_limit: '1.00', action: 'warn' }, 'u4');
    await charge('u4', '2.00');
    await expect(evaluateBudgets(t.db)).resolves.toBe(0);
    expect((await constraint(constraintId))?.exceeded_at).not.toBeNull();
  });

  test('a budget past its duration no longer applies and its lock goes; expired locks are removed', async () => {
    const { constraintId } = await budget(
      { period: 'day', duration: 2, periodic_limit: '1.00' },
      'u5',
      'UTC_TIMESTAMP(6) - INTERVAL 1 DAY',
    );
    await charge('u5', '2.00');
    await expect(evaluateBudgets(t.db)).resolves.toBe(1);
    await t.db.execute(
      'UPDATE account_resourceconstraint SET start_date = UTC_TIMESTAMP(6) - INTERVAL 3 DAY WHERE id = ?',
      [constraintId],
    );
    await expect(evaluateBudgets(t.db)).resolves.toBe(0);
    expect(await locks('u5')).toHaveLength(0);

    const { constraintId: hourly } = await budget({ period: 'hour', periodic_limit: '1.00' }, 'u6');
    await t.db.execute(
      "INSERT INTO account_resourcelock (resource_locator, expiration_date, resource_constraint_id, reason) VALUES ('u6', UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE, ?, 'last hour')",
      [hourly],
    );
    await expect(evaluateBudgets(t.db)).resolves.toBe(0);
    expect(await locks('u6')).toHaveLength(0);
  });

  // The cases below follow Smarter's smarter/smarter/apps/account/models/budget.py (ResourceConstraint.evaluate,
  // expires_at, evaluate_budgets) and charge.py (get_actuals), at a fixed `now`.
  const at = (iso: string) => `'${iso}'`;

  test("a budget's duration counts from the start of the period that holds its start date", async () => {
    // Monthly, one month, attached on March 15: Smarter's budget ends on April 1, not April 15.
    await budget({ period: 'month', duration: 1, periodic_limit: '1.00' }, 'd1', at('2026-03-15 12:00:00'));
    await charge('d1', '2.00', 0, at('2026-04-01 08:00:00'));
    await expect(evaluateBudgets(t.db, { now: new Date('2026-04-02T10:00:00Z') })).resolves.toBe(0);
    expect(await locks('d1')).toHaveLength(0);
    // Before April 1 it applies, and its lock ends when the budget does.
    await charge('d1', '2.00', 0, at('2026-03-20 08:00:00'));
    await expect(evaluateBudgets(t.db, { locator: 'd1', now: new Date('2026-03-31T10:00:00Z') })).resolves.toBe(1);
    expect((await locks('d1'))[0]?.expiration_date).toBe('2026-04-01 00:00:00.000000');
  });

  test("the lock reason is Smarter's text, word for word, without the budget's message", async () => {
    const now = new Date('2026-11-20T10:00:00Z');
    const cases: {
      locator: string;
      fields: Record<string, unknown>;
      start: string;
      charges: [string, number, string][];
      reason: string;
    }[] = [
      {
        locator: 'w1',
        fields: { name: 'student_monthly', periodic_limit: '10.00', message: 'Ask your teacher for more.' },
        start: '2026-11-02 09:00:00',
        charges: [
          ['6.25', 0, '2026-11-10 09:00:00'],
          ['4.255', 0, '2026-11-12 09:00:00'],
        ],
        reason:
          'Budget student_monthly: the monthly limit of $10.00 has been reached ($10.50 this month). It renews at 2026-12-01 00:00 UTC.',
      },
      {
        locator: 'w2',
        fields: { name: 'daily_allowance', period: 'day', periodic_limit: '1234.00' },
        start: '2026-11-20 01:00:00',
        charges: [['1500', 0, '2026-11-20 02:00:00']],
        reason:
          'Budget daily_allowance: the dayly limit of $1,234.00 has been reached ($1,500.00 this day). It renews at 2026-11-21 00:00 UTC.',
      },
      {
        locator: 'w3',
        fields: { name: 'project_tokens', unit: 'tokens', absolute_limit: '1000.75', periodic_limit: '10' },
        start: '2026-08-22 23:30:00',
        charges: [['0', 1100, '2026-11-19 09:00:00']],
        reason: 'Budget project_tokens: the limit of 1,000 tokens has been reached (1,100 tokens since 2026-08-22).',
      },
    ];
    for (const { locator, fields, start, charges, reason } of cases) {
      await budget(fields, locator, at(start));
      for (const [cost, tokens, createdAt] of charges) await charge(locator, cost, tokens, at(createdAt));
      await evaluateBudgets(t.db, { now });
      expect((await locks(locator))[0]?.reason).toBe(reason);
    }
    await expect(resourceLockMessage(t.db, 'w1', now)).resolves.toBe('Ask your teacher for more.');
    await expect(resourceLockMessage(t.db, 'w2', now)).resolves.toBe((await locks('w2'))[0]?.reason);
  });

  test('the absolute actuals include the aggregated hour that holds the start date', async () => {
    await budget({ absolute_limit: '1.00' }, 'h1', at('2026-11-20 09:30:00'));
    await t.db.execute(
      `INSERT INTO account_aggregatedcharges (year, month, day, hour, resource_locator, charge_type, records, prompt_tokens, completion_tokens, total_tokens, total_cost)
       VALUES (2026, 11, 20, 9, 'h1', 'completion', 3, 0, 0, 0, '1.00000')`,
    );
    await expect(evaluateBudgets(t.db, { now: new Date('2026-11-20T10:15:00Z') })).resolves.toBe(1);
  });

  test('exceeded_at is set when a lock is made and by a warn-only budget once a period, and never cleared', async () => {
    const { budgetId, constraintId } = await budget(
      { period: 'day', periodic_limit: '1.00', action: 'warn' },
      'x1',
      at('2026-11-18 00:00:00'),
    );
    await charge('x1', '2.00', 0, at('2026-11-18 08:00:00'));
    await evaluateBudgets(t.db, { now: new Date('2026-11-18T09:00:00Z') });
    expect((await constraint(constraintId))?.exceeded_at).toBe('2026-11-18 09:00:00.000000');
    await evaluateBudgets(t.db, { now: new Date('2026-11-18T10:00:00Z') });
    expect((await constraint(constraintId))?.exceeded_at).toBe('2026-11-18 09:00:00.000000');
    await charge('x1', '2.00', 0, at('2026-11-19 08:00:00'));
    await evaluateBudgets(t.db, { now: new Date('2026-11-19T09:00:00Z') });
    expect((await constraint(constraintId))?.exceeded_at).toBe('2026-11-19 09:00:00.000000');
    // Under the limit: left as it is, as is the constraint's updated_at (Smarter writes it with .update()).
    await t.db.execute("UPDATE account_budget SET periodic_limit = '50.00' WHERE id = ?", [budgetId]);
    await t.db.execute("UPDATE account_resourceconstraint SET updated_at = '2026-01-01 00:00:00' WHERE id = ?", [
      constraintId,
    ]);
    await evaluateBudgets(t.db, { now: new Date('2026-11-19T10:00:00Z') });
    const [row] = await t.db.select('SELECT exceeded_at, updated_at FROM account_resourceconstraint WHERE id = ?', [
      constraintId,
    ]);
    expect(row).toEqual({ exceeded_at: '2026-11-19 09:00:00.000000', updated_at: '2026-01-01 00:00:00.000000' });
  });

  test('a threshold of 0 never warns; evaluate_budget_constraints returns the number of locking constraints', async () => {
    const { constraintId } = await budget(
      { periodic_limit: '100.00', warning_threshold: 0 },
      'r1',
      at('2026-11-01 00:00:00'),
    );
    await charge('r1', '99.00', 0, at('2026-11-10 00:00:00'));
    await evaluateBudgets(t.db, { now: new Date('2026-11-20T10:00:00Z') });
    expect((await constraint(constraintId))?.warned_at).toBeNull();
    // One resource locked by two budgets: Smarter counts the constraints, 2.
    await budget({ periodic_limit: '1.00' }, 'r2', at('2026-11-01 00:00:00'));
    await budget({ absolute_limit: '1.00' }, 'r2', at('2026-11-01 00:00:00'));
    await charge('r2', '5.00', 0, at('2026-11-10 00:00:00'));
    await expect(evaluateBudgets(t.db, { now: new Date('2026-11-20T10:00:00Z') })).resolves.toBe(2);
  });

  // Smarter: smarter/apps/account/models/budget.py (evaluate_budgets and evaluate_resource_constraints catch per constraint, log, go on).
  test('a constraint that fails is logged and the others are still evaluated, by evaluate_budgets and evaluate_resource_constraints alike', async () => {
    // A duration no date can hold: Python's datetime overflows on it as JavaScript's Date does.
    const bad = await budget({ absolute_limit: '1.00', period: 'day', duration: 2_000_000_000 }, 'shared');
    await budget({ periodic_limit: '1.00' }, 'shared');
    await budget({ periodic_limit: '1.00' }, 'other');
    await charge('shared', '5.00');
    await charge('other', '5.00');
    const errors: string[] = [];
    await expect(evaluateBudgets(t.db, { onError: (m) => errors.push(m) })).resolves.toBe(2);
    expect(errors).toEqual([
      expect.stringMatching(`^evaluate_budgets\\(\\) failed for ResourceConstraint ${bad.constraintId}: `),
    ]);
    expect(await locks('shared')).toHaveLength(1);
    expect(await locks('other')).toHaveLength(1);
    errors.length = 0;
    await expect(evaluateBudgets(t.db, { locator: 'shared', onError: (m) => errors.push(m) })).resolves.toBe(1);
    expect(errors).toEqual([
      expect.stringMatching(`^evaluate_resource_constraints\\(\\) failed for ResourceConstraint ${bad.constraintId}: `),
    ]);
  });

  // Smarter: smarter/apps/account/models/budget.py (evaluate_budgets removes expired locks and those of inactive
  // constraints only); removing those of a constraint left without a budget is decided in docs/tasks/account.md.
  test('the hourly run removes the lock of an active constraint left without a budget; a locator-only run does not', async () => {
    const { constraintId } = await budget({ absolute_limit: '1.00' }, 'orphan');
    await charge('orphan', '5.00');
    await expect(evaluateBudgets(t.db)).resolves.toBe(1);
    await t.db.execute('UPDATE account_resourceconstraint SET budget_id = NULL WHERE id = ?', [constraintId]);
    await evaluateBudgets(t.db, { locator: 'orphan' });
    expect(await locks('orphan')).toHaveLength(1);
    await expect(evaluateBudgets(t.db)).resolves.toBe(0);
    expect(await locks('orphan')).toHaveLength(0);
  });

  test('an inactive constraint releases its lock; evaluating concurrently gives one lock, not two', async () => {
    const { constraintId } = await budget({ periodic_limit: '1.00' }, 'u7');
    await charge('u7', '5.00');
    await Promise.all([evaluateBudgets(t.db), evaluateBudgets(t.db), evaluateBudgets(t.db, { locator: 'u7' })]);
    expect(await locks('u7')).toHaveLength(1);
    await t.db.execute('UPDATE account_resourceconstraint SET is_active = 0 WHERE id = ?', [constraintId]);
    await expect(evaluateBudgets(t.db)).resolves.toBe(0);
  });
});
