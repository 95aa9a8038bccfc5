/**
 * RedBeat's JSON (redbeat 2.3.3, `redbeat/decoder.py`): objects tagged `__type__` for datetimes, interval and
 * crontab schedules. We write what RedBeat's encoder writes (Python's `json.dumps` layout, floats as floats,
 * datetimes in UTC with the offset 0.0 that Celery's UTC `app.now()` gives) and read whatever it may have
 * written (an offset in seconds or a zone name). `rrule` schedules are not supported: such an entry is skipped.
 */
import { type Schedule, type CrontabSpec, crontab, every } from '../lib/beat/schedules.js';

export class RedBeatFormatError extends Error {
  readonly code = 'REDBEAT_FORMAT';
}

/** A number Python must read as a float (`1.0`, not `1`). */
export class PyFloat {
  constructor(readonly value: number) {}
}

export type PyValue = null | boolean | number | string | PyFloat | PyValue[] | { [k: string]: PyValue };

/** Python's `json.dumps` (ensure_ascii, `", "` and `": "` separators), so Python-side diffs stay readable. */
export function pyDumps(v: PyValue): string {
  if (v instanceof PyFloat) {
    if (!Number.isFinite(v.value)) throw new RedBeatFormatError(`cannot encode ${v.value}`);
    return Number.isInteger(v.value) ? v.value.toFixed(1) : String(v.value);
  }
  if (Array.isArray(v)) return `[${v.map(pyDumps).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyString(k)}: ${pyDumps(x)}`)
      .join(', ')}}`;
  }
  if (typeof v === 'string') return pyString(v);
  return JSON.stringify(v);
}

const pyString = (s: string): string =>
  JSON.stringify(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** A UTC instant as RedBeat encodes a datetime. */
export function encodeDatetime(ms: number): PyValue {
  const d = new Date(ms);
  return {
    __type__: 'datetime',
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    microsecond: d.getUTCMilliseconds() * 1000,
    timezone: new PyFloat(0),
  };
}

export function encodeSchedule(s: Schedule): PyValue {
  if (s.kind === 'interval') return { __type__: 'interval', every: new PyFloat(s.seconds), relative: false };
  const c = s.spec;
  return {
    __type__: 'crontab',
    minute: c.minute ?? '*',
    hour: c.hour ?? '*',
    day_of_week: c.dayOfWeek ?? '*',
    day_of_month: c.dayOfMonth ?? '*',
    month_of_year: c.monthOfYear ?? '*',
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Milliseconds between UTC and the wall clock of `zone` at the instant `ms`. */
function zoneOffsetMs(zone: string, ms: number): number {
  let fmt: Intl.DateTimeFormat;
  try {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    throw new RedBeatFormatError(`unknown time zone ${JSON.stringify(zone)}`);
  }
  const p = Object.fromEntries(fmt.formatToParts(new Date(ms)).map((x) => [x.type, Number(x.value)]));
  const wall = Date.UTC(p.year ?? 0, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0, p.second ?? 0);
  return wall - Math.floor(ms / 1000) * 1000;
}

function decodeDatetime(d: Record<string, unknown>): number {
  const n = (k: string, dflt?: number): number => {
    const v = d[k] ?? dflt;
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      throw new RedBeatFormatError(`datetime field ${k} is not an integer: ${JSON.stringify(v)}`);
    }
    return v;
  };
  const wall =
    Date.UTC(n('year'), n('month') - 1, n('day'), n('hour', 0), n('minute', 0), n('second', 0)) +
    Math.floor(n('microsecond', 0) / 1000);
  const zone = d.timezone ?? 'UTC';
  // A number is an offset in seconds (RedBeat: `timezone(timedelta(minutes=zone / 60))`); a string a zone name.
  if (typeof zone === 'number') return wall - zone * 1000;
  if (typeof zone !== 'string') throw new RedBeatFormatError(`datetime timezone ${JSON.stringify(zone)}`);
  const first = wall - zoneOffsetMs(zone, wall);
  return wall - zoneOffsetMs(zone, first);
}

function cronField(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  // A list of values (crontab accepts any iterable), as `a,b,c`.
  if (Array.isArray(v) && v.every((x) => typeof x === 'number' || typeof x === 'string')) return v.join(',');
  throw new RedBeatFormatError(`crontab field ${JSON.stringify(v)} is not supported`);
}

function decodeSchedule(d: Record<string, unknown>): Schedule {
  if (d.__type__ === 'interval') {
    if (typeof d.every !== 'number') {
      throw new RedBeatFormatError(`interval without a number of seconds: ${JSON.stringify(d.every)}`);
    }
    return every(d.every);
  }
  if (d.__type__ === 'crontab') {
    const spec: CrontabSpec = {};
    const set = (k: keyof CrontabSpec, v: unknown) => {
      const f = cronField(v);
      if (f !== undefined) spec[k] = f;
    };
    set('minute', d.minute);
    set('hour', d.hour);
    set('dayOfWeek', d.day_of_week);
    set('dayOfMonth', d.day_of_month);
    set('monthOfYear', d.month_of_year);
    return crontab(spec);
  }
  throw new RedBeatFormatError(
    `schedule type ${JSON.stringify(d.__type__)} is not supported (interval and crontab are)`,
  );
}

/** A RedBeat `definition`: what to send and when. */
export interface RedBeatDefinition {
  name: string;
  task: string;
  args: unknown[];
  kwargs: Record<string, unknown>;
  options: Record<string, unknown>;
  schedule: Schedule;
  enabled: boolean;
}

export function decodeDefinition(text: string): RedBeatDefinition {
  const d = parse(text);
  if (!isRecord(d)) throw new RedBeatFormatError('definition is not an object');
  if (typeof d.task !== 'string') throw new RedBeatFormatError('definition has no task');
  if (!isRecord(d.schedule)) throw new RedBeatFormatError('definition has no schedule');
  return {
    name: String(d.name),
    task: d.task,
    args: Array.isArray(d.args) ? d.args : [],
    kwargs: isRecord(d.kwargs) ? d.kwargs : {},
    options: isRecord(d.options) ? d.options : {},
    schedule: decodeSchedule(d.schedule),
    // RedBeat's entries default to enabled; only an explicit false disables one.
    enabled: d.enabled !== false,
  };
}

/** A RedBeat `meta`: when the entry last ran (null: never, so due at once) and how many times. */
export interface RedBeatMeta {
  lastRunAt: number | null;
  totalRunCount: number;
}

export function decodeMeta(text: string | null | undefined): RedBeatMeta {
  if (!text) return { lastRunAt: null, totalRunCount: 0 };
  const d = parse(text);
  if (!isRecord(d)) throw new RedBeatFormatError('meta is not an object');
  const at = d.last_run_at;
  const count = d.total_run_count;
  return {
    lastRunAt:
      at === null || at === undefined
        ? null
        : isRecord(at) && at.__type__ === 'datetime'
          ? decodeDatetime(at)
          : fail(`last_run_at is not a datetime: ${JSON.stringify(at)}`),
    totalRunCount: typeof count === 'number' ? count : 0,
  };
}

function fail(message: string): never {
  throw new RedBeatFormatError(message);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new RedBeatFormatError(`not JSON: ${(err as Error).message}`);
  }
}

export function encodeDefinition(e: {
  name: string;
  task: string;
  args: unknown[];
  kwargs: Record<string, unknown>;
  options: Record<string, unknown>;
  schedule: Schedule;
  enabled: boolean;
}): string {
  return pyDumps({
    name: e.name,
    task: e.task,
    args: e.args as PyValue[],
    kwargs: e.kwargs as Record<string, PyValue>,
    options: e.options as Record<string, PyValue>,
    schedule: encodeSchedule(e.schedule),
    enabled: e.enabled,
  });
}

export function encodeMeta(m: { lastRunAt: number; totalRunCount?: number }): string {
  return pyDumps({
    last_run_at: encodeDatetime(m.lastRunAt),
    ...(m.totalRunCount !== undefined ? { total_run_count: m.totalRunCount } : {}),
  });
}
