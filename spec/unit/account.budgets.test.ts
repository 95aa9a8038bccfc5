/**
 * The pure parts of budget enforcement against Smarter's smarter/smarter/apps/account/models/budget.py
 * (`period_start`, `add_periods`, `ResourceConstraint.expires_at`, `Budget.format_amount` and the reasons
 * `ResourceConstraint.evaluate` writes) and charge.py (`_hour_key`). Expected values are what Python prints.
 */
import { addPeriods, budgetExpiresAt, hourKey, periodStart } from '../../tasks/account/budget-periods.js';
import { absoluteReason, formatAmount, lockMessage, periodicReason } from '../../tasks/account/budget-text.js';
import { Dec } from '../../tasks/db/decimal.js';

const utc = (iso: string) => new Date(`${iso}Z`);

describe("ResourceConstraint.expires_at: the start of the start date's period plus `duration` periods", () => {
  test.each([
    ['month', '2026-03-15T12:00:00', 1, '2026-04-01T00:00:00.000Z'],
    ['month', '2026-01-31T23:59:59', 2, '2026-03-01T00:00:00.000Z'],
    ['week', '2026-01-31T13:45:00', 1, '2026-02-02T00:00:00.000Z'], // a Saturday: its week began on Monday the 26th
    ['day', '2026-11-20T09:30:00', 2, '2026-11-22T00:00:00.000Z'],
    ['hour', '2026-11-20T09:30:00', 3, '2026-11-20T12:00:00.000Z'],
  ] as const)('%s budget attached %s for %i', (period, start, duration, end) => {
    expect(budgetExpiresAt(period, utc(start), duration)?.toISOString()).toBe(end);
  });

  test('a duration of 0 never ends', () => {
    expect(budgetExpiresAt('month', utc('2026-03-15T12:00:00'), 0)).toBeNull();
  });
});

test('_hour_key: year, month, day and hour as one number, in UTC', () => {
  expect(hourKey(utc('2026-10-01T13:59:59.999'))).toBe(2026100113);
  expect(hourKey(utc('2026-01-09T00:00:00'))).toBe(2026010900);
});

describe('Budget.format_amount', () => {
  test.each([
    ['cost', '10', '$10.00'],
    ['cost', '1234567.5', '$1,234,567.50'],
    ['cost', '10.505', '$10.50'], // f"{Decimal('10.505'):,.2f}" rounds half to even
    ['cost', '10.515', '$10.52'],
    ['cost', '0.00000001', '$0.00'],
    ['tokens', '50000', '50,000 tokens'],
    ['tokens', '1000.75', '1,000 tokens'], // int() truncates
    ['tokens', '999', '999 tokens'],
  ] as const)('%s %s → %s', (unit, amount, text) => {
    expect(formatAmount(unit, Dec.of(amount))).toBe(text);
  });
});

describe('the reasons ResourceConstraint.evaluate writes', () => {
  test('periodic: `{period}ly` (so "dayly"), "this {period}", and when it renews, in UTC', () => {
    expect(
      periodicReason({
        budget: 'b',
        unit: 'cost',
        limit: Dec.of('10.00'),
        actual: Dec.of('10.5'),
        period: 'month',
        periodEnds: utc('2026-12-01T00:00:00'),
      }),
    ).toBe(
      'Budget b: the monthly limit of $10.00 has been reached ($10.50 this month). It renews at 2026-12-01 00:00 UTC.',
    );
    expect(
      periodicReason({
        budget: 'b',
        unit: 'tokens',
        limit: Dec.of('50000'),
        actual: Dec.of('50001'),
        period: 'day',
        periodEnds: utc('2026-11-21T00:00:00'),
      }),
    ).toBe(
      'Budget b: the dayly limit of 50,000 tokens has been reached (50,001 tokens this day). It renews at 2026-11-21 00:00 UTC.',
    );
    expect(
      periodicReason({
        budget: 'b',
        unit: 'cost',
        limit: Dec.of('1'),
        actual: Dec.of('1'),
        period: 'hour',
        periodEnds: utc('2026-11-20T10:00:00'),
      }),
    ).toContain('the hourly limit of $1.00 has been reached ($1.00 this hour). It renews at 2026-11-20 10:00 UTC.');
  });

  test('absolute: the spending since the start date', () => {
    expect(
      absoluteReason({
        budget: 'p',
        unit: 'cost',
        limit: Dec.of('100'),
        actual: Dec.of('100.004'),
        startDate: utc('2026-08-22T23:30:00'),
      }),
    ).toBe('Budget p: the limit of $100.00 has been reached ($100.00 since 2026-08-22).');
  });

  test("ResourceLock.message: the budget's message, else the reason", () => {
    expect(lockMessage('Ask your teacher.', 'Budget b: …')).toBe('Ask your teacher.');
    expect(lockMessage('', 'Budget b: …')).toBe('Budget b: …');
    expect(lockMessage(null, '')).toBe('A budget forbids more charges.');
  });
});

describe("billing periods (UTC), as Smarter's budget tests state them", () => {
  const when = new Date(Date.UTC(2026, 0, 31, 13, 45)); // a Saturday
  test.each([
    ['hour', Date.UTC(2026, 0, 31, 13)],
    ['day', Date.UTC(2026, 0, 31)],
    ['week', Date.UTC(2026, 0, 26)],
    ['month', Date.UTC(2026, 0, 1)],
  ] as const)('the %s containing Sat 2026-01-31 13:45 starts at the right instant', (period, start) => {
    expect(periodStart(period, when).getTime()).toBe(start);
  });

  test('adding months crosses years both ways; a week is 7 days', () => {
    const nov = new Date(Date.UTC(2026, 10, 1));
    expect(addPeriods('month', nov, 2).toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(addPeriods('month', nov, -11).toISOString()).toBe('2025-12-01T00:00:00.000Z');
    expect(addPeriods('week', nov, 1).toISOString()).toBe('2026-11-08T00:00:00.000Z');
    expect(addPeriods('month', new Date(Date.UTC(2026, 0, 31)), 1).toISOString()).toBe('2026-02-28T00:00:00.000Z');
  });
});
