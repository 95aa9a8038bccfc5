/**
 * Celery Beat's schedules, pure: `schedule(run_every)` intervals and `crontab(...)` with Celery's field
 * syntax and semantics, in UTC. An entry is due when its next run after `lastRunAt` has come; a beat that was
 * down across several runs sends once (no burst), and one that was down across a run sends it at start (no
 * skipped hour). Times are epoch milliseconds so that tests inject any clock.
 */
export type Schedule =
  { kind: 'interval'; seconds: number } | { kind: 'crontab'; spec: CrontabSpec; fields: CronFields };

export interface CrontabSpec {
  minute?: string;
  hour?: string;
  dayOfWeek?: string;
  dayOfMonth?: string;
  monthOfYear?: string;
}

interface CronFields {
  minute: Set<number>;
  hour: Set<number>;
  dayOfWeek: Set<number>;
  dayOfMonth: Set<number>;
  monthOfYear: Set<number>;
}

export class ScheduleError extends Error {
  readonly code = 'BEAT_SCHEDULE_INVALID';
}

export function every(seconds: number): Schedule {
  if (!(seconds > 0)) throw new ScheduleError(`an interval must be positive, got ${seconds}`);
  return { kind: 'interval', seconds };
}

const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** Celery's `crontab_parser`: a star, a star or range with a `/n` step, `a`, `a-b`, lists, day or month names. */
export function parseCronField(
  text: string,
  min: number,
  max: number,
  names: string[] = [],
  nameBase = 0,
  what = 'field',
): Set<number> {
  const value = (tok: string): number => {
    const i = names.indexOf(tok.toLowerCase().slice(0, 3));
    const n = /^\d+$/.test(tok) ? Number(tok) : i >= 0 && tok.length >= 3 ? i + nameBase : NaN;
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new ScheduleError(`${what}: ${JSON.stringify(tok)} is not in ${min}-${max}`);
    }
    return n;
  };
  const out = new Set<number>();
  for (const part of String(text).split(',')) {
    const m = /^\s*([^/]+?)\s*(?:\/\s*(\d+)\s*)?$/.exec(part);
    if (!m) throw new ScheduleError(`${what}: cannot parse ${JSON.stringify(part)}`);
    const [, range = '', stepText] = m;
    const step = stepText === undefined ? 1 : Number(stepText);
    if (step < 1) throw new ScheduleError(`${what}: step must be at least 1`);
    let lo: number;
    let hi: number;
    if (range === '*') [lo, hi] = [min, max];
    else if (range.includes('-')) {
      const [a = '', b = ''] = range.split('-');
      [lo, hi] = [value(a.trim()), value(b.trim())];
    } else {
      lo = value(range);
      hi = stepText === undefined ? lo : max;
    }
    // Celery expands the range (wrapping past the maximum, as in fri-mon), then takes every step-th value.
    const values: number[] = [];
    if (hi < lo) {
      for (let v = lo; v <= max; v += 1) values.push(v);
      for (let v = min; v <= hi; v += 1) values.push(v);
    } else for (let v = lo; v <= hi; v += 1) values.push(v);
    values.forEach((v, i) => {
      if (i % step === 0) out.add(v);
    });
  }
  return out;
}

export function crontab(spec: CrontabSpec = {}): Schedule {
  return {
    kind: 'crontab',
    spec,
    fields: {
      minute: parseCronField(spec.minute ?? '*', 0, 59, [], 0, 'minute'),
      hour: parseCronField(spec.hour ?? '*', 0, 23, [], 0, 'hour'),
      dayOfWeek: new Set(
        [...parseCronField(spec.dayOfWeek ?? '*', 0, 7, DAY_NAMES, 0, 'day_of_week')].map((d) => d % 7),
      ),
      dayOfMonth: parseCronField(spec.dayOfMonth ?? '*', 1, 31, [], 0, 'day_of_month'),
      monthOfYear: parseCronField(spec.monthOfYear ?? '*', 1, 12, MONTH_NAMES, 1, 'month_of_year'),
    },
  };
}

const MINUTE = 60_000;

/** The first minute strictly after `afterMs` that the crontab matches (Celery needs day of week AND of month). */
export function nextCron(f: CronFields, afterMs: number): number {
  let t = Math.floor(afterMs / MINUTE) * MINUTE + MINUTE;
  const limit = afterMs + 8 * 366 * 86_400_000;
  while (t < limit) {
    const d = new Date(t);
    if (!f.monthOfYear.has(d.getUTCMonth() + 1)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    } else if (!f.dayOfMonth.has(d.getUTCDate()) || !f.dayOfWeek.has(d.getUTCDay())) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
    } else if (!f.hour.has(d.getUTCHours())) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1);
    } else if (!f.minute.has(d.getUTCMinutes())) {
      t += MINUTE;
    } else return t;
  }
  throw new ScheduleError('the crontab never matches (e.g. day_of_month 31 in a month without one)');
}

/** When an entry last sent at `lastRunMs` runs next. */
export function nextRun(s: Schedule, lastRunMs: number): number {
  return s.kind === 'interval' ? lastRunMs + s.seconds * 1000 : nextCron(s.fields, lastRunMs);
}

/** Celery's `is_due`: whether to send now, and how long until this entry next needs a look. */
export function isDue(s: Schedule, lastRunMs: number, nowMs: number): { due: boolean; nextInMs: number } {
  const next = nextRun(s, lastRunMs);
  if (next > nowMs) return { due: false, nextInMs: next - nowMs };
  return { due: true, nextInMs: nextRun(s, nowMs) - nowMs };
}

export function describeSchedule(s: Schedule): string {
  if (s.kind === 'interval') return `every ${s.seconds} s`;
  const c = s.spec;
  return `crontab(minute=${c.minute ?? '*'}, hour=${c.hour ?? '*'}, day_of_week=${c.dayOfWeek ?? '*'}, day_of_month=${c.dayOfMonth ?? '*'}, month_of_year=${c.monthOfYear ?? '*'})`;
}
