/**
 * Budget enforcement, as Smarter's `ResourceConstraint.evaluate` does it (`account/models/budget.py`): each active
 * ResourceConstraint applies its Budget's absolute and periodic limits (cost in USD or tokens) to the charges of
 * its resource since the constraint started. Reaching a limit locks the resource (action `block`) or only
 * records it once per period in `exceeded_at` (`warn`); below the limits, crossing `warning_threshold` percent is
 * recorded once per period in `warned_at`. A periodic lock ends with its period, an absolute one when the budget
 * changes; a budget past its `duration` no longer applies. `exceeded_at` and `warned_at` are written as Smarter's
 * queryset `.update()` writes them: never cleared, and without moving the constraint's `updated_at`.
 *
 * Each constraint is evaluated in its own transaction with its row locked, so concurrent evaluations (the
 * hourly task and one after each charge) serialise, and evaluating twice changes nothing.
 */
import type { Database, Queryable, Row } from '../db/database.js';
import { Dec } from '../db/decimal.js';
import { NOW, insertModel } from '../db/django.js';
import { type BudgetPeriod, addPeriods, budgetExpiresAt, fromSqlTime, hourKey, isPeriod, periodStart, sqlTime } from './budget-periods.js';
import { type BudgetUnit, absoluteReason, lockMessage, periodicReason } from './budget-text.js';

interface Constraint {
  id: number;
  locator: string;
  start: Date;
  exceededAt: Date | null;
  warnedAt: Date | null;
  budget: { name: string; period: BudgetPeriod; unit: BudgetUnit; periodic: Dec; absolute: Dec; duration: number; action: string; threshold: number };
}

function toConstraint(r: Row): Constraint {
  const period = String(r.period);
  return {
    id: Number(r.id),
    locator: String(r.resource_locator),
    start: fromSqlTime(r.start_date) ?? new Date(0),
    exceededAt: fromSqlTime(r.exceeded_at),
    warnedAt: fromSqlTime(r.warned_at),
    budget: {
      name: String(r.name),
      period: isPeriod(period) ? period : 'month',
      unit: r.unit === 'tokens' ? 'tokens' : 'cost',
      periodic: Dec.of(String(r.periodic_limit)),
      absolute: Dec.of(String(r.absolute_limit)),
      duration: Number(r.duration),
      action: String(r.action),
      threshold: Number(r.warning_threshold),
    },
  };
}

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
  return Dec.of(String(r.c ?? '0')).add(Dec.of(String(r.a ?? '0')));
}

const sameInstant = (a: Date | null, b: Date | null) => (a === null || b === null ? a === b : a.getTime() === b.getTime());

/** Evaluates one constraint inside `tx`; returns whether its resource is locked by it afterwards. */
async function evaluateOne(tx: Queryable, c: Constraint, now: Date): Promise<boolean> {
  const b = c.budget;
  const expiresAt = budgetExpiresAt(b.period, c.start, b.duration);
  if (expiresAt && now >= expiresAt) {
    await tx.execute('DELETE FROM account_resourcelock WHERE resource_constraint_id = ?', [c.id]);
    return false;
  }
  const periodBegins = periodStart(b.period, now);
  const periodEnds = addPeriods(b.period, periodBegins, 1);
  const periodic = b.periodic.isZero() ? Dec.zero() : await actuals(tx, c.locator, c.start > periodBegins ? c.start : periodBegins, b.unit);
  const absolute = b.absolute.isZero() ? Dec.zero() : await actuals(tx, c.locator, c.start, b.unit);

  // The absolute limit is checked first: its lock does not end with the period.
  let reason: string | null = null;
  let expiration: Date | null = null;
  if (!b.absolute.isZero() && absolute.cmp(b.absolute) >= 0) {
    reason = absoluteReason({ budget: b.name, unit: b.unit, limit: b.absolute, actual: absolute, startDate: c.start });
  } else if (!b.periodic.isZero() && periodic.cmp(b.periodic) >= 0) {
    reason = periodicReason({ budget: b.name, unit: b.unit, limit: b.periodic, actual: periodic, period: b.period, periodEnds });
    expiration = periodEnds;
  }
  // A lock ends no later than the budget does.
  if (reason && expiresAt) expiration = expiration && expiration < expiresAt ? expiration : expiresAt;

  const locks = await tx.select('SELECT id, reason, expiration_date FROM account_resourcelock WHERE resource_constraint_id = ? ORDER BY id', [c.id]);
  if (reason && b.action === 'block') {
    const [lock, ...extra] = locks;
    if (!lock) {
      await insertModel(tx, 'account_resourcelock', {
        resource_locator: c.locator,
        expiration_date: expiration ? sqlTime(expiration) : null,
        resource_constraint_id: c.id,
        reason,
      });
      await tx.execute('UPDATE account_resourceconstraint SET exceeded_at = ? WHERE id = ?', [sqlTime(now), c.id]);
    } else if (lock.reason !== reason || !sameInstant(fromSqlTime(lock.expiration_date), expiration)) {
      await tx.execute(`UPDATE account_resourcelock SET reason = ?, expiration_date = ?, updated_at = ${NOW} WHERE id = ?`, [
        reason,
        expiration ? sqlTime(expiration) : null,
        lock.id,
      ]);
    }
    if (extra.length > 0) await tx.execute('DELETE FROM account_resourcelock WHERE id IN (?)', [extra.map((r) => r.id)]);
    return true;
  }
  if (locks.length > 0) await tx.execute('DELETE FROM account_resourcelock WHERE resource_constraint_id = ?', [c.id]);
  if (reason) {
    // action `warn`: the excess is recorded once per billing period.
    if (c.exceededAt === null || c.exceededAt < periodBegins) {
      await tx.execute('UPDATE account_resourceconstraint SET exceeded_at = ? WHERE id = ?', [sqlTime(now), c.id]);
    }
    return false;
  }
  const threshold = Dec.of(b.threshold);
  for (const [actual, limit] of [
    [periodic, b.periodic],
    [absolute, b.absolute],
  ] as const) {
    if (b.threshold > 0 && !limit.isZero() && actual.mul(Dec.of(100)).cmp(limit.mul(threshold)) >= 0) {
      if (c.warnedAt === null || c.warnedAt < periodBegins) {
        await tx.execute('UPDATE account_resourceconstraint SET warned_at = ? WHERE id = ?', [sqlTime(now), c.id]);
      }
      break;
    }
  }
  return false;
}

const CONSTRAINTS = `SELECT c.id, c.resource_locator, c.start_date, c.exceeded_at, c.warned_at,
    b.name, b.period, b.unit, b.periodic_limit, b.absolute_limit, b.duration, b.action, b.warning_threshold
  FROM account_resourceconstraint c JOIN account_budget b ON b.id = c.budget_id
  WHERE c.is_active = 1`;

/**
 * Smarter's `evaluate_budgets()`: removes expired locks and those of inactive or detached constraints, then
 * evaluates every active constraint; with `locator`, `evaluate_resource_constraints(locator)`, which only
 * evaluates that resource's. Returns the number of constraints that lock their resource (a resource locked by
 * two budgets counts twice, as in Smarter).
 */
export async function evaluateBudgets(db: Database, options: { now?: Date; locator?: string } = {}): Promise<number> {
  const now = options.now ?? new Date();
  if (options.locator === undefined) {
    await db.execute('DELETE FROM account_resourcelock WHERE expiration_date IS NOT NULL AND expiration_date <= ?', [sqlTime(now)]);
    await db.execute(
      `DELETE l FROM account_resourcelock l JOIN account_resourceconstraint c ON c.id = l.resource_constraint_id
        WHERE c.is_active = 0 OR c.budget_id IS NULL`,
    );
  }
  const filter = options.locator === undefined ? '' : ' AND c.resource_locator = ?';
  const ids = await db.select(`SELECT c.id FROM account_resourceconstraint c WHERE c.is_active = 1 AND c.budget_id IS NOT NULL${filter}`, options.locator === undefined ? [] : [options.locator]);
  let locked = 0;
  for (const { id } of ids) {
    const isLocked = await db.transaction(async (tx) => {
      const rows = await tx.select(`${CONSTRAINTS} AND c.id = ? FOR UPDATE`, [id]);
      return rows[0] ? evaluateOne(tx, toConstraint(rows[0]), now) : false;
    });
    if (isLocked) locked += 1;
  }
  return locked;
}

/**
 * Smarter's `get_resource_lock_message(locator)`: what a request charged to the resource is refused with, or null
 * when no unexpired lock of an active constraint holds it (`charge_authorization` raises with this message).
 */
export async function resourceLockMessage(db: Queryable, locator: string, now: Date = new Date()): Promise<string | null> {
  const [row] = await db.select(
    `SELECT l.reason, b.message FROM account_resourcelock l
       JOIN account_resourceconstraint c ON c.id = l.resource_constraint_id
       LEFT JOIN account_budget b ON b.id = c.budget_id
      WHERE l.resource_locator = ? AND c.is_active = 1 AND (l.expiration_date IS NULL OR l.expiration_date > ?)
      ORDER BY l.id LIMIT 1`,
    [locator, sqlTime(now)],
  );
  if (!row) return null;
  return lockMessage(row.message === null ? null : String(row.message), String(row.reason ?? ''));
}
