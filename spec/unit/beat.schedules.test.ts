/** Beat's schedule math, table-tested with an injected clock (UTC): intervals, crontab fields and edge cases. */
import { crontab, every, isDue, nextRun, parseCronField } from '../../lib/beat/schedules.js';

const T = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

describe('interval schedules', () => {
  test.each([
    ['2026-11-30T10:00:00Z', '2026-11-30T10:59:59Z', false, 1000],
    ['2026-11-30T10:00:00Z', '2026-11-30T11:00:00Z', true, 3_600_000],
    ['2026-11-30T10:00:00Z', '2026-11-30T17:30:00Z', true, 3_600_000],
  ])('every hour, last run %s, now %s: due=%s, next look in %i ms', (last, now, due, next) => {
    expect(isDue(every(3600), T(last), T(now))).toEqual({ due, nextInMs: next });
  });

  test('a beat down for seven hours sends once, not seven times', () => {
    const s = every(3600);
    const first = isDue(s, T('2026-11-30T10:00:00Z'), T('2026-11-30T17:30:00Z'));
    expect(first.due).toBe(true);
    expect(isDue(s, T('2026-11-30T17:30:00Z'), T('2026-11-30T17:30:01Z')).due).toBe(false);
  });
});

describe("crontab fields (Celery's crontab_parser)", () => {
  test.each([
    ['*', 0, 5, [0, 1, 2, 3, 4, 5]],
    ['*/15', 0, 59, [0, 15, 30, 45]],
    ['1-5', 0, 23, [1, 2, 3, 4, 5]],
    ['1-10/3', 0, 23, [1, 4, 7, 10]],
    ['0,30', 0, 59, [0, 30]],
    ['22-2', 0, 23, [22, 23, 0, 1, 2]],
  ] as const)('%s in %i-%i', (text, min, max, values) => {
    expect([...parseCronField(text, min, max)].sort((a, b) => a - b)).toEqual([...values].sort((a, b) => a - b));
  });

  test('day and month names, and 7 as Sunday', () => {
    const c = crontab({ dayOfWeek: 'mon-fri', monthOfYear: 'jan,dec' });
    expect(c.kind === 'crontab' && [...c.fields.dayOfWeek].sort()).toEqual([1, 2, 3, 4, 5]);
    expect(c.kind === 'crontab' && [...c.fields.monthOfYear].sort((a, b) => a - b)).toEqual([1, 12]);
    const sun = crontab({ dayOfWeek: '7' });
    expect(sun.kind === 'crontab' && [...sun.fields.dayOfWeek]).toEqual([0]);
  });

  test.each([['60'], ['a-b'], ['*/0'], ['5-']])('minute %j is refused with a message that names the field', (text) => {
    expect(() => crontab({ minute: text })).toThrow(/minute/);
  });
});

describe('crontab next run', () => {
  test.each([
    [{ minute: '0', hour: '4' }, '2026-11-30T03:59:59Z', '2026-11-30T04:00:00Z'],
    [{ minute: '0', hour: '4' }, '2026-11-30T04:00:00Z', '2026-12-01T04:00:00Z'],
    [{ minute: '*/15' }, '2026-11-30T10:14:59Z', '2026-11-30T10:15:00Z'],
    [{ minute: '30', hour: '23', dayOfMonth: '31' }, '2026-11-01T00:00:00Z', '2026-12-31T23:30:00Z'],
    [{ minute: '0', hour: '0', dayOfMonth: '29', monthOfYear: '2' }, '2026-03-01T00:00:00Z', '2028-02-29T00:00:00Z'],
    [{ minute: '0', hour: '0', dayOfMonth: '1' }, '2026-12-31T23:59:00Z', '2027-01-01T00:00:00Z'],
    // Celery requires the day of the week AND the day of the month: the next Monday that is the 1st.
    [{ minute: '0', hour: '9', dayOfWeek: 'mon', dayOfMonth: '1' }, '2026-11-30T00:00:00Z', '2027-02-01T09:00:00Z'],
    [{ minute: '0', hour: '12', dayOfWeek: 'sat,sun' }, '2026-11-30T12:00:00Z', '2026-12-05T12:00:00Z'],
  ])('%j after %s → %s', (spec, after, next) => {
    expect(iso(nextRun(crontab(spec), T(after)))).toBe(next);
  });

  test('a run missed while beat was down is sent at start, once', () => {
    const daily = crontab({ minute: '0', hour: '4' });
    expect(isDue(daily, T('2026-11-29T04:00:00Z'), T('2026-11-30T06:00:00Z'))).toEqual({
      due: true,
      nextInMs: 22 * 3_600_000,
    });
    expect(isDue(daily, T('2026-11-30T06:00:00Z'), T('2026-11-30T06:00:01Z')).due).toBe(false);
  });

  test('a crontab that can never match is refused', () => {
    expect(() => nextRun(crontab({ dayOfMonth: '31', monthOfYear: '2' }), T('2026-01-01T00:00:00Z'))).toThrow(
      /never matches/,
    );
  });
});
