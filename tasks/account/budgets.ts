/**
 * Budget enforcement, as Smarter's budget models describe it: each active ResourceConstraint applies its
 * Budget's periodic and absolute limits (cost in USD or tokens) to the charges of its resource since the
 * constraint started; reaching a limit locks the resource (action `block`) or only records it (`warn`);
 * crossing `warning_threshold` percent is recorded once per period in `warned_at`. A periodic lock ends
 * with its period, an absolute one when the budget changes; a budget past its `duration` no longer applies.
 * Each constraint is evaluated in its own transaction with its row locked, so concurrent evaluations (the
 * hourly task and one after each charge) serialise, and evaluating twice changes nothing.
 */
import type { Database, Queryable, Row } from '../db/database.js';
import { Dec } from '../db/decimal.js';
import { NOW, insertModel } from '../db/django.js';
import { type BudgetPeriod, PERIOD_ADJECTIVE, addPeriods, fromSqlTime, isPeriod, periodStart, sqlTime } from './budget-periods.js';

interface Constraint {
  id: number;
  locator: string;
  start: Date;
  exceededAt: Date | null;
  warnedAt: Date | null;
  budget: { name: string; period: BudgetPeriod; unit: 'cost' | 'tokens'; periodic: Dec; absolute: Dec; duration: number; action: string; message: string; threshold: number };
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
      message: String(r.message ?? ''),
      threshold: Number(r.warning_threshold),
    },
  };
}

/** Spending of a resource from `since` on: its charges, and the aggregated charges of the hours from `since`. */
export async function actuals(db: Queryable, locator: string, since: Date, unit: 'cost' | 'tokens'): Promise<Dec> {
  const col = unit === 'cost' ? 'total_cost' : 'total_tokens';
  const rows = await db.select(
    `SELECT (SELECT COALESCE(SUM(${col}), 0) FROM account_charge WHERE resource_locator = ? AND created_at >= ?) AS c,
            (SELECT COALESCE(SUM(${col}), 0) FROM account_aggregatedcharges WHERE resource_locator = ?
               AND STR_TO_DATE(CONCAT_WS('-', year, month, day, hour), '%Y-%c-%e-%k') >= ?) AS a`,
    [locator, sqlTime(since), locator, sqlTime(since)],
  );
  const r = rows[0] ?? {};
  return Dec.of(String(r.c ?? '0')).add(Dec.of(String(r.a ?? '0')));
}

/** "1234567.50" → "1,234,567.50", on the text so that no amount goes through a float. */
function thousands(text: string): string {
  const [int = '', frac] = text.split('.');
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return frac === undefined ? grouped : `${grouped}.${frac}`;
}

function describeLimit(c: Constraint, which: 'periodic' | 'absolute'): string {
  const limit = which === 'periodic' ? c.budget.periodic : c.budget.absolute;
  const amount = c.budget.unit === 'cost' ? `$${thousands(limit.quantize(2).toString())}` : `${thousands(limit.quantize(0).toString())} tokens`;
  const kind = which === 'periodic' ? PERIOD_ADJECTIVE[c.budget.period] : 'absolute';
  return `Budget ${c.budget.name}: the ${kind} limit of ${amount} is reached.`;
}

/** Evaluates one constraint inside `tx`; returns whether its resource is locked by it afterwards. */
async function evaluateOne(tx: Queryable, c: Constraint, now: Date): Promise<boolean> {
  const b = c.budget;
  const expiresAt = b.duration > 0 ? addPeriods(b.period, c.start, b.duration) : null;
  if (expiresAt && expiresAt <= now) {
    await tx.execute('DELETE FROM account_resourcelock WHERE resource_constraint_id = ?', [c.id]);
    return false;
  }
  const pStart = periodStart(b.period, now);
  const pEnd = addPeriods(b.period, pStart, 1);
  const periodic = b.periodic.isZero() ? null : await actuals(tx, c.locator, c.start > pStart ? c.start : pStart, b.unit);
  const absolute = b.absolute.isZero() ? null : await actuals(tx, c.locator, c.start, b.unit);
  const overAbsolute = absolute !== null && absolute.cmp(b.absolute) >= 0;
  const overPeriodic = periodic !== null && periodic.cmp(b.periodic) >= 0;
  const exceeded = overAbsolute || overPeriodic;
  const pct = (used: Dec | null, limit: Dec) => (used === null ? false : used.mul(Dec.of(100)).cmp(limit.mul(Dec.of(b.threshold))) >= 0);
  const warned = pct(periodic, b.periodic) || pct(absolute, b.absolute);

  const warnedAt = warned ? (c.warnedAt && c.warnedAt >= pStart ? c.warnedAt : now) : c.warnedAt;
  await tx.execute('UPDATE account_resourceconstraint SET exceeded_at = ?, warned_at = ?, updated_at = ' + NOW + ' WHERE id = ?', [
    exceeded ? sqlTime(c.exceededAt ?? now) : null,
    warnedAt ? sqlTime(warnedAt) : null,
    c.id,
  ]);
  if (!exceeded || b.action !== 'block') {
    await tx.execute('DELETE FROM account_resourcelock WHERE resource_constraint_id = ?', [c.id]);
    return false;
  }
  const until = overAbsolute ? expiresAt : expiresAt && expiresAt < pEnd ? expiresAt : pEnd;
  const reason = describeLimit(c, overAbsolute ? 'absolute' : 'periodic');
  const text = b.message.trim() !== '' ? `${reason} ${b.message}` : reason;
  const locks = await tx.select('SELECT id FROM account_resourcelock WHERE resource_constraint_id = ? ORDER BY id', [c.id]);
  const [first, ...extra] = locks;
  if (first) {
    await tx.execute(`UPDATE account_resourcelock SET expiration_date = ?, reason = ?, resource_locator = ?, updated_at = ${NOW} WHERE id = ?`, [
      until ? sqlTime(until) : null, text, c.locator, first.id,
    ]);
    if (extra.length > 0) await tx.execute('DELETE FROM account_resourcelock WHERE id IN (?)', [extra.map((r) => r.id)]);
  } else {
    await insertModel(tx, 'account_resourcelock', {
      resource_locator: c.locator,
      expiration_date: until ? sqlTime(until) : null,
      resource_constraint_id: c.id,
      reason: text,
    });
  }
  return true;
}

const CONSTRAINTS = `SELECT c.id, c.resource_locator, c.start_date, c.exceeded_at, c.warned_at,
    b.name, b.period, b.unit, b.periodic_limit, b.absolute_limit, b.duration, b.action, b.message, b.warning_threshold
  FROM account_resourceconstraint c JOIN account_budget b ON b.id = c.budget_id
  WHERE c.is_active = 1`;

/**
 * Smarter's `evaluate_budgets()`: removes expired locks and those of inactive or detached constraints,
 * re-evaluates every active constraint (or only those of `locator`), and returns the number of resources
 * that stay locked.
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
  for (const { id } of ids) {
    await db.transaction(async (tx) => {
      const rows = await tx.select(`${CONSTRAINTS} AND c.id = ? FOR UPDATE`, [id]);
      if (rows[0]) await evaluateOne(tx, toConstraint(rows[0]), now);
    });
  }
  const locked = await db.select(
    'SELECT COUNT(DISTINCT resource_locator) AS n FROM account_resourcelock WHERE expiration_date IS NULL OR expiration_date > ?',
    [sqlTime(now)],
  );
  return Number(locked[0]?.n ?? 0);
}
