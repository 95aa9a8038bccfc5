/**
 * The text of a budget's lock, as Smarter's `ResourceConstraint.evaluate` words it (`account/models/budget.py`):
 * the limit reached, the spending against it, and when a periodic limit renews. Python's formatting is kept:
 * `{period}ly` (so a daily budget reads "dayly"), `f"${amount:,.2f}"` rounding half-even, `int(tokens)`
 * truncating, `%Y-%m-%d %H:%M %Z` of a UTC datetime. Pure, for tests.
 */
import type { Dec } from '../db/decimal.js';
import type { BudgetPeriod } from './budget-periods.js';

export type BudgetUnit = 'cost' | 'tokens';

const grouped = (digits: string) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** `Budget.format_amount`: "$1,234.50" or "50,000 tokens", on the decimal's text so no amount goes through a float. */
export function formatAmount(unit: BudgetUnit, amount: Dec): string {
  if (unit === 'tokens') {
    const whole = amount.units / 10n ** BigInt(amount.scale);
    const sign = whole < 0n ? '-' : '';
    return `${sign}${grouped((whole < 0n ? -whole : whole).toString())} tokens`;
  }
  const text = amount.quantize(2).toString();
  const sign = text.startsWith('-') ? '-' : '';
  const [int = '', frac = ''] = text.replace('-', '').split('.');
  return `$${sign}${grouped(int)}.${frac}`;
}

const pad = (n: number) => String(n).padStart(2, '0');
const ymd = (d: Date) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;

export interface LimitReached {
  budget: string;
  unit: BudgetUnit;
  limit: Dec;
  actual: Dec;
}

/** A periodic limit: "…the monthly limit of $10.00 has been reached ($10.50 this month). It renews at 2026-12-01 00:00 UTC." */
export function periodicReason(r: LimitReached & { period: BudgetPeriod; periodEnds: Date }): string {
  const renews = `${ymd(r.periodEnds)} ${pad(r.periodEnds.getUTCHours())}:${pad(r.periodEnds.getUTCMinutes())} UTC`;
  return (
    `Budget ${r.budget}: the ${r.period}ly limit of ${formatAmount(r.unit, r.limit)} has been reached ` +
    `(${formatAmount(r.unit, r.actual)} this ${r.period}). It renews at ${renews}.`
  );
}

/** An absolute limit: "…the limit of 1,000 tokens has been reached (1,100 tokens since 2026-09-01)." */
export function absoluteReason(r: LimitReached & { startDate: Date }): string {
  return `Budget ${r.budget}: the limit of ${formatAmount(r.unit, r.limit)} has been reached (${formatAmount(r.unit, r.actual)} since ${ymd(r.startDate)}).`;
}

/** `ResourceLock.message`, what chat users are told: the budget's own message when it has one, else the lock's reason. */
export function lockMessage(budgetMessage: string | null, reason: string): string {
  return budgetMessage || reason || 'A budget forbids more charges.';
}
