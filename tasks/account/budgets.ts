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
import type { Database, Queryable } from '../db/database.js';
import { Dec } from '../db/decimal.js';
import { addPeriods, budgetExpiresAt, periodStart } from './budget-periods.js';
import { absoluteReason, lockMessage, periodicReason } from './budget-text.js';
import {
  type Constraint,
  actuals,
  activeConstraintIds,
  constraintLocks,
  createLock,
  deleteConstraintLocks,
  deleteDetachedLocks,
  deleteExpiredLocks,
  deleteLocks,
  liveLock,
  lockConstraint,
  setExceededAt,
  setWarnedAt,
  updateLock,
} from './rows.js';

const sameInstant = (a: Date | null, b: Date | null) =>
  a === null || b === null ? a === b : a.getTime() === b.getTime();

/** Evaluates one constraint inside `tx`; returns whether its resource is locked by it afterwards. */
async function evaluateOne(tx: Queryable, c: Constraint, now: Date): Promise<boolean> {
  const b = c.budget;
  const expiresAt = budgetExpiresAt(b.period, c.start, b.duration);
  if (expiresAt && now >= expiresAt) {
    await deleteConstraintLocks(tx, c.id);
    return false;
  }
  const periodBegins = periodStart(b.period, now);
  const periodEnds = addPeriods(b.period, periodBegins, 1);
  const periodic = b.periodic.isZero()
    ? Dec.zero()
    : await actuals(tx, c.locator, c.start > periodBegins ? c.start : periodBegins, b.unit);
  const absolute = b.absolute.isZero() ? Dec.zero() : await actuals(tx, c.locator, c.start, b.unit);

  // The absolute limit is checked first: its lock does not end with the period.
  let reason: string | null = null;
  let expiration: Date | null = null;
  if (!b.absolute.isZero() && absolute.cmp(b.absolute) >= 0) {
    reason = absoluteReason({ budget: b.name, unit: b.unit, limit: b.absolute, actual: absolute, startDate: c.start });
  } else if (!b.periodic.isZero() && periodic.cmp(b.periodic) >= 0) {
    reason = periodicReason({
      budget: b.name,
      unit: b.unit,
      limit: b.periodic,
      actual: periodic,
      period: b.period,
      periodEnds,
    });
    expiration = periodEnds;
  }
  // A lock ends no later than the budget does.
  if (reason && expiresAt) expiration = expiration && expiration < expiresAt ? expiration : expiresAt;

  const locks = await constraintLocks(tx, c.id);
  if (reason && b.action === 'block') {
    const [lock, ...extra] = locks;
    if (!lock) {
      await createLock(tx, { locator: c.locator, constraintId: c.id, reason, expiration });
      await setExceededAt(tx, c.id, now);
    } else if (lock.reason !== reason || !sameInstant(lock.expiration, expiration)) {
      await updateLock(tx, lock.id, reason, expiration);
    }
    if (extra.length > 0) {
      await deleteLocks(
        tx,
        extra.map((r) => r.id),
      );
    }
    return true;
  }
  if (locks.length > 0) await deleteConstraintLocks(tx, c.id);
  if (reason) {
    // action `warn`: the excess is recorded once per billing period.
    if (c.exceededAt === null || c.exceededAt < periodBegins) {
      await setExceededAt(tx, c.id, now);
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
        await setWarnedAt(tx, c.id, now);
      }
      break;
    }
  }
  return false;
}

/**
 * Smarter's `evaluate_budgets()`: removes expired locks and those of inactive or detached constraints, then
 * evaluates every active constraint; with `locator`, `evaluate_resource_constraints(locator)`, which only
 * evaluates that resource's. Returns the number of constraints that lock their resource (a resource locked by
 * two budgets counts twice, as in Smarter). As Smarter's, a constraint that fails is logged through `onError`
 * (its transaction rolled back) and the others are still evaluated: one bad budget never unlocks or spares the rest.
 */
export async function evaluateBudgets(
  db: Database,
  options: { now?: Date; locator?: string; onError?: (message: string) => void } = {},
): Promise<number> {
  const now = options.now ?? new Date();
  const caller = options.locator === undefined ? 'evaluate_budgets()' : 'evaluate_resource_constraints()';
  if (options.locator === undefined) {
    await deleteExpiredLocks(db, now);
    await deleteDetachedLocks(db);
  }
  const ids = await activeConstraintIds(db, options.locator);
  let locked = 0;
  for (const id of ids) {
    try {
      const isLocked = await db.transaction(async (tx) => {
        const c = await lockConstraint(tx, id);
        return c ? evaluateOne(tx, c, now) : false;
      });
      if (isLocked) locked += 1;
    } catch (err) {
      options.onError?.(`${caller} failed for ResourceConstraint ${id}: ${(err as Error).message}`);
    }
  }
  return locked;
}

/**
 * Smarter's `get_resource_lock_message(locator)`: what a request charged to the resource is refused with, or null
 * when no unexpired lock of an active constraint holds it (`charge_authorization` raises with this message).
 */
export async function resourceLockMessage(
  db: Queryable,
  locator: string,
  now: Date = new Date(),
): Promise<string | null> {
  const lock = await liveLock(db, locator, now);
  if (!lock) return null;
  return lockMessage(lock.message, lock.reason);
}
