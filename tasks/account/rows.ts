/**
 * The account app's tables: LLM prices, charge aggregates, budgets, resource constraints and their locks. A query
 * that belongs to a transaction is given that transaction's handle by its caller. The charges themselves are
 * written by create_charge's group commit (`tasks/db/once.ts`), which owns that INSERT.
 */
import type { Queryable, Row } from '../db/database.js';
import { num, str, strOrNull } from '../db/columns.js';
import { Dec } from '../db/decimal.js';
import { NOW, insertModel, insertModels } from '../db/django.js';
import { type BudgetPeriod, fromSqlTime, hourKey, isPeriod, sqlTime } from './budget-periods.js';
import type { BudgetUnit } from './budget-text.js';

// Prices and constraints a new charge looks up.

/** The price per million tokens (exact text) of a model for a charge type, the provider matched without regard to case; null without one. */
export async function llmPrice(
  db: Queryable,
  chargeType: string,
  provider: string,
  model: string,
): Promise<string | null> {
  const [r] = await db.select(
    'SELECT price FROM account_llmprices WHERE charge_type = ? AND LOWER(provider) = LOWER(?) AND model = ? LIMIT 1',
    [chargeType, provider, model],
  );
  return strOrNull(r?.price);
}

/** Which of `locators` have an active ResourceConstraint. */
export async function constrainedLocators(db: Queryable, locators: readonly string[]): Promise<Set<string>> {
  const found = await db.select(
    'SELECT DISTINCT resource_locator FROM account_resourceconstraint WHERE is_active = 1 AND resource_locator IN (?)',
    [locators],
  );
  return new Set(found.map((f) => str(f.resource_locator)));
}

// Aggregates.

/**
 * One row of `account_aggregatedcharges` to write. The sums are MariaDB's exact text (SUM of an INT column is a
 * DECIMAL), written back as they were read.
 */
export interface AggregateGroup {
  year: number;
  month: number;
  day: number;
  hour: number;
  locator: string;
  chargeType: string;
  records: string;
  promptTokens: string;
  completionTokens: string;
  totalTokens: string;
  cost: string;
}

const AGGREGATE_COST_PLACES = 5;
const AGGREGATE_COLUMNS = [
  'year',
  'month',
  'day',
  'hour',
  'resource_locator',
  'charge_type',
  'records',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'total_cost',
];

function toGroup(g: Row, hour: number): AggregateGroup {
  return {
    year: num(g.y),
    month: num(g.m),
    day: num(g.d),
    hour,
    locator: str(g.resource_locator),
    chargeType: str(g.charge_type),
    records: str(g.records),
    promptTokens: str(g.pt),
    completionTokens: str(g.ct),
    totalTokens: str(g.tt),
    cost: str(g.cost),
  };
}

/** Writes the groups, 500 rows a statement; `total_cost` is rounded half-even to the column's 5 places, as Django would. */
export async function insertAggregates(tx: Queryable, groups: readonly AggregateGroup[]): Promise<void> {
  for (let i = 0; i < groups.length; i += 500) {
    const rows = groups
      .slice(i, i + 500)
      .map((g) => [
        g.year,
        g.month,
        g.day,
        g.hour,
        g.locator,
        g.chargeType,
        g.records,
        g.promptTokens,
        g.completionTokens,
        g.totalTokens,
        Dec.of(g.cost).quantize(AGGREGATE_COST_PLACES).toString(),
      ]);
    await insertModels(tx, 'account_aggregatedcharges', AGGREGATE_COLUMNS, rows);
  }
}

/** The session's scratch table of the charge ids one hourly pass takes. */
export async function createChargeScratch(tx: Queryable): Promise<void> {
  await tx.execute('CREATE TEMPORARY TABLE IF NOT EXISTS aggregating_charge (id BIGINT PRIMARY KEY) ENGINE=MEMORY');
}

export async function clearChargeScratch(tx: Queryable): Promise<void> {
  await tx.execute('DELETE FROM aggregating_charge');
}

export async function dropChargeScratch(tx: Queryable): Promise<void> {
  await tx.execute('DROP TEMPORARY TABLE IF EXISTS aggregating_charge');
}

/** Locks every dated charge and copies its id into the scratch table; how many were taken. */
export async function takeCharges(tx: Queryable): Promise<number> {
  const taken = await tx.execute(
    'INSERT INTO aggregating_charge SELECT id FROM account_charge WHERE created_at IS NOT NULL FOR UPDATE',
  );
  return taken.affectedRows;
}

/** The taken charges summed per hour, resource and charge type. */
export async function takenChargeGroups(tx: Queryable): Promise<AggregateGroup[]> {
  const groups = await tx.select(
    `SELECT YEAR(c.created_at) y, MONTH(c.created_at) m, DAY(c.created_at) d, HOUR(c.created_at) h, c.resource_locator, c.charge_type,
                  COUNT(*) records, SUM(c.prompt_tokens) pt, SUM(c.completion_tokens) ct, SUM(c.total_tokens) tt, SUM(c.total_cost) cost
             FROM account_charge c JOIN aggregating_charge a ON a.id = c.id
            GROUP BY y, m, d, h, c.resource_locator, c.charge_type`,
  );
  return groups.map((g) => toGroup(g, num(g.h)));
}

/** Deletes the taken charges; how many went. */
export async function deleteTakenCharges(tx: Queryable): Promise<number> {
  const del = await tx.execute('DELETE c FROM account_charge c JOIN aggregating_charge a ON a.id = c.id');
  return del.affectedRows;
}

/** Room for the ids of a whole month's aggregates in one GROUP_CONCAT. */
export async function widenGroupConcat(tx: Queryable): Promise<void> {
  await tx.execute('SET SESSION group_concat_max_len = 16777216');
}

export async function lockMonthAggregates(tx: Queryable, year: number, month: number): Promise<void> {
  await tx.select('SELECT id FROM account_aggregatedcharges WHERE year = ? AND month = ? FOR UPDATE', [year, month]);
}

/**
 * The month's aggregates summed per day, resource and charge type (as hour 0), with the ids they sum; only the
 * days not yet rolled up (more than one row, or a row of another hour).
 */
export async function unrolledDays(
  tx: Queryable,
  year: number,
  month: number,
): Promise<Array<AggregateGroup & { ids: number[] }>> {
  const groups = await tx.select(
    `SELECT year y, month m, day d, resource_locator, charge_type, SUM(records) records, SUM(prompt_tokens) pt,
              SUM(completion_tokens) ct, SUM(total_tokens) tt, SUM(total_cost) cost, GROUP_CONCAT(id) ids
         FROM account_aggregatedcharges WHERE year = ? AND month = ?
        GROUP BY day, resource_locator, charge_type HAVING COUNT(*) > 1 OR MAX(hour) <> 0 FOR UPDATE`,
    [year, month],
  );
  return groups.map((g) => ({ ...toGroup(g, 0), ids: str(g.ids).split(',').map(Number) }));
}

/** Deletes aggregates by id, 1000 a statement. */
export async function deleteAggregates(tx: Queryable, ids: readonly number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 1000) {
    await tx.execute('DELETE FROM account_aggregatedcharges WHERE id IN (?)', [ids.slice(i, i + 1000)]);
  }
}

// Budgets, constraints and locks.

/**
 * Smarter's `get_actuals(locator, start)` in the budget's unit: the charges created from `start` on, and the
 * aggregated charges of the hours from the one that holds `start` on (aggregates have the precision of an hour,
 * so the hour that holds `start` counts whole). Smarter also bounds both by `now`; nothing is dated after now
 * but a charge just written by the database's clock, which a worker whose clock lags it would leave out.
 */
export async function actuals(db: Queryable, locator: string, since: Date, unit: BudgetUnit): Promise<Dec> {
  const col = unit === 'cost' ? 'total_cost' : 'total_tokens';
  const rows = await db.select(
    `SELECT (SELECT COALESCE(SUM(${col}), 0) FROM account_charge WHERE resource_locator = ? AND created_at >= ?) AS c,
            (SELECT COALESCE(SUM(${col}), 0) FROM account_aggregatedcharges WHERE resource_locator = ?
               AND year * 1000000 + month * 10000 + day * 100 + hour >= ?) AS a`,
    [locator, sqlTime(since), locator, hourKey(since)],
  );
  const r = rows[0] ?? {};
  return Dec.of(str(r.c) || '0').add(Dec.of(str(r.a) || '0'));
}

/** An active ResourceConstraint with its Budget. */
export interface Constraint {
  id: number;
  locator: string;
  start: Date;
  exceededAt: Date | null;
  warnedAt: Date | null;
  budget: {
    name: string;
    period: BudgetPeriod;
    unit: BudgetUnit;
    periodic: Dec;
    absolute: Dec;
    duration: number;
    action: string;
    threshold: number;
  };
}

function toConstraint(r: Row): Constraint {
  const period = str(r.period);
  return {
    id: num(r.id),
    locator: str(r.resource_locator),
    start: fromSqlTime(r.start_date) ?? new Date(0),
    exceededAt: fromSqlTime(r.exceeded_at),
    warnedAt: fromSqlTime(r.warned_at),
    budget: {
      name: str(r.name),
      period: isPeriod(period) ? period : 'month',
      unit: str(r.unit) === 'tokens' ? 'tokens' : 'cost',
      periodic: Dec.of(str(r.periodic_limit)),
      absolute: Dec.of(str(r.absolute_limit)),
      duration: num(r.duration),
      action: str(r.action),
      threshold: num(r.warning_threshold),
    },
  };
}

const CONSTRAINTS = `SELECT c.id, c.resource_locator, c.start_date, c.exceeded_at, c.warned_at,
    b.name, b.period, b.unit, b.periodic_limit, b.absolute_limit, b.duration, b.action, b.warning_threshold
  FROM account_resourceconstraint c JOIN account_budget b ON b.id = c.budget_id
  WHERE c.is_active = 1`;

/** The ids of the active constraints that have a budget; with `locator`, only that resource's. */
export async function activeConstraintIds(db: Queryable, locator?: string): Promise<number[]> {
  const filter = locator === undefined ? '' : ' AND c.resource_locator = ?';
  const ids = await db.select(
    `SELECT c.id FROM account_resourceconstraint c WHERE c.is_active = 1 AND c.budget_id IS NOT NULL${filter}`,
    locator === undefined ? [] : [locator],
  );
  return ids.map((r) => num(r.id));
}

/** The active constraint and its budget, its row locked until `tx` ends; null when it is gone or inactive. */
export async function lockConstraint(tx: Queryable, id: number): Promise<Constraint | null> {
  const rows = await tx.select(`${CONSTRAINTS} AND c.id = ? FOR UPDATE`, [id]);
  return rows[0] ? toConstraint(rows[0]) : null;
}

/** `ResourceConstraint.objects.filter(id=…).update(exceeded_at=now)`: `updated_at` does not move. */
export async function setExceededAt(tx: Queryable, constraintId: number, now: Date): Promise<void> {
  await tx.execute('UPDATE account_resourceconstraint SET exceeded_at = ? WHERE id = ?', [sqlTime(now), constraintId]);
}

/** `ResourceConstraint.objects.filter(id=…).update(warned_at=now)`: `updated_at` does not move. */
export async function setWarnedAt(tx: Queryable, constraintId: number, now: Date): Promise<void> {
  await tx.execute('UPDATE account_resourceconstraint SET warned_at = ? WHERE id = ?', [sqlTime(now), constraintId]);
}

export interface LockRow {
  id: number;
  reason: string;
  expiration: Date | null;
}

/** The constraint's locks, oldest first. */
export async function constraintLocks(tx: Queryable, constraintId: number): Promise<LockRow[]> {
  const locks = await tx.select(
    'SELECT id, reason, expiration_date FROM account_resourcelock WHERE resource_constraint_id = ? ORDER BY id',
    [constraintId],
  );
  return locks.map((r) => ({ id: num(r.id), reason: str(r.reason), expiration: fromSqlTime(r.expiration_date) }));
}

/** `ResourceLock.objects.create(…)`; `expiration` null locks until the budget changes. */
export async function createLock(
  tx: Queryable,
  lock: { locator: string; constraintId: number; reason: string; expiration: Date | null },
): Promise<void> {
  await insertModel(tx, 'account_resourcelock', {
    resource_locator: lock.locator,
    expiration_date: lock.expiration ? sqlTime(lock.expiration) : null,
    resource_constraint_id: lock.constraintId,
    reason: lock.reason,
  });
}

export async function updateLock(tx: Queryable, id: number, reason: string, expiration: Date | null): Promise<void> {
  await tx.execute(
    `UPDATE account_resourcelock SET reason = ?, expiration_date = ?, updated_at = ${NOW} WHERE id = ?`,
    [reason, expiration ? sqlTime(expiration) : null, id],
  );
}

export async function deleteLocks(tx: Queryable, ids: readonly number[]): Promise<void> {
  await tx.execute('DELETE FROM account_resourcelock WHERE id IN (?)', [ids]);
}

export async function deleteConstraintLocks(tx: Queryable, constraintId: number): Promise<void> {
  await tx.execute('DELETE FROM account_resourcelock WHERE resource_constraint_id = ?', [constraintId]);
}

/** Deletes the locks whose expiration date has come. */
export async function deleteExpiredLocks(db: Queryable, now: Date): Promise<void> {
  await db.execute('DELETE FROM account_resourcelock WHERE expiration_date IS NOT NULL AND expiration_date <= ?', [
    sqlTime(now),
  ]);
}

/** Deletes the locks of inactive constraints and of constraints whose budget is gone. */
export async function deleteDetachedLocks(db: Queryable): Promise<void> {
  await db.execute(
    `DELETE l FROM account_resourcelock l JOIN account_resourceconstraint c ON c.id = l.resource_constraint_id
        WHERE c.is_active = 0 OR c.budget_id IS NULL`,
  );
}

/** The resource's first unexpired lock of an active constraint, with its budget's message (null without a budget). */
export async function liveLock(
  db: Queryable,
  locator: string,
  now: Date,
): Promise<{ reason: string; message: string | null } | null> {
  const [row] = await db.select(
    `SELECT l.reason, b.message FROM account_resourcelock l
       JOIN account_resourceconstraint c ON c.id = l.resource_constraint_id
       LEFT JOIN account_budget b ON b.id = c.budget_id
      WHERE l.resource_locator = ? AND c.is_active = 1 AND (l.expiration_date IS NULL OR l.expiration_date > ?)
      ORDER BY l.id LIMIT 1`,
    [locator, sqlTime(now)],
  );
  if (!row) return null;
  return { reason: str(row.reason), message: strOrNull(row.message) };
}
