/** Billing periods of Smarter's budgets, in UTC: hour, day, week (from Monday) and month. Pure, for tests. */
export type BudgetPeriod = 'hour' | 'day' | 'week' | 'month';

export function isPeriod(v: string): v is BudgetPeriod {
  return v === 'hour' || v === 'day' || v === 'week' || v === 'month';
}

export function periodStart(period: BudgetPeriod, when: Date): Date {
  const y = when.getUTCFullYear();
  const m = when.getUTCMonth();
  const d = when.getUTCDate();
  switch (period) {
    case 'hour':
      return new Date(Date.UTC(y, m, d, when.getUTCHours()));
    case 'day':
      return new Date(Date.UTC(y, m, d));
    case 'week':
      return new Date(Date.UTC(y, m, d - ((when.getUTCDay() + 6) % 7)));
    case 'month':
      return new Date(Date.UTC(y, m, 1));
  }
}

/** `when` plus `n` periods (n may be negative); months keep the day of the month, clamped to its end. */
export function addPeriods(period: BudgetPeriod, when: Date, n: number): Date {
  const t = when.getTime();
  switch (period) {
    case 'hour':
      return new Date(t + n * 3_600_000);
    case 'day':
      return new Date(t + n * 86_400_000);
    case 'week':
      return new Date(t + n * 7 * 86_400_000);
    case 'month': {
      const y = when.getUTCFullYear();
      const m = when.getUTCMonth() + n;
      const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
      return new Date(
        Date.UTC(
          y,
          m,
          Math.min(when.getUTCDate(), last),
          when.getUTCHours(),
          when.getUTCMinutes(),
          when.getUTCSeconds(),
          when.getUTCMilliseconds(),
        ),
      );
    }
  }
}

/**
 * `ResourceConstraint.expires_at`: a budget's `duration` counts whole periods from the start of the period that
 * holds its start date, so a monthly budget attached on the 15th for one month ends on the 1st. Null: no end.
 */
export function budgetExpiresAt(period: BudgetPeriod, startDate: Date, duration: number): Date | null {
  return duration > 0 ? addPeriods(period, periodStart(period, startDate), duration) : null;
}

/** `charge.py`'s `_hour_key`: an aggregated charge's year, month, day and hour as one sortable number (UTC). */
export function hourKey(when: Date): number {
  return (
    when.getUTCFullYear() * 1_000_000 + (when.getUTCMonth() + 1) * 10_000 + when.getUTCDate() * 100 + when.getUTCHours()
  );
}

/** MariaDB DATETIME(6) text in UTC, as Django writes it. */
export function sqlTime(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', '000');
}

/** A DATETIME text read back from MariaDB (UTC). */
export function fromSqlTime(text: string | number | null | undefined): Date | null {
  if (text === null || text === undefined) return null;
  return new Date(`${String(text).replace(' ', 'T')}Z`);
}
