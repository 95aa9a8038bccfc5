/**
 * RedBeat's key names and JSON (sibson/redbeat 2.3.3 `redbeat/schedulers.py` RedBeatConfig, `redbeat/decoder.py`),
 * as smarter-beat names, writes and reads them; RedBeat's settings under their Celery names.
 */
import { BEAT_SETTINGS } from '../../beat/settings.js';
import { lockTimeoutMs, redBeatKeys } from '../../beat/redbeat.js';
import {
  RedBeatFormatError,
  decodeDefinition,
  decodeMeta,
  encodeDefinition,
  encodeMeta,
} from '../../beat/redbeat-json.js';
import { crontab, every } from '../../lib/beat/schedules.js';
import { loadConfig } from '../../lib/config/settings.js';

test("RedBeat's key names: <prefix>:lock, :schedule, :statics; a lock key is prefixed unless it starts with the prefix", () => {
  expect(redBeatKeys()).toEqual({
    prefix: 'redbeat:',
    lock: 'redbeat::lock',
    schedule: 'redbeat::schedule',
    statics: 'redbeat::statics',
  });
  expect(redBeatKeys('smarter:', 'beat-lock').lock).toBe('smarter:beat-lock');
  expect(redBeatKeys('smarter:', 'smarter:my-lock').lock).toBe('smarter:my-lock');
  expect(redBeatKeys('smarter:').schedule).toBe('smarter::schedule');
});

test("RedBeat's settings are read under their Celery (Django CELERY_) names", () => {
  const v = loadConfig(BEAT_SETTINGS, {
    CELERY_REDBEAT_KEY_PREFIX: 'p:',
    CELERY_REDBEAT_LOCK_KEY: 'l',
    CELERY_REDBEAT_LOCK_TIMEOUT: '90',
    CELERY_REDBEAT_REDIS_URL: 'redis://r:6379/2',
  }).values;
  expect([v.redbeatKeyPrefix, v.redbeatLockKey, v.redbeatLockTimeout, v.redisUrl]).toEqual([
    'p:',
    'l',
    90,
    'redis://r:6379/2',
  ]);
  expect(loadConfig(BEAT_SETTINGS, {}).values.redbeatLockTimeout).toBeNull();
});

test("the lock's timeout is redbeat_lock_timeout, else five times the loop interval, as RedBeat's", () => {
  const d = loadConfig(BEAT_SETTINGS, {}).values;
  expect(lockTimeoutMs(d.redbeatLockTimeout, d.maxLoopInterval)).toBe(25_000);
  expect(lockTimeoutMs(null, 300)).toBe(1_500_000);
  expect(lockTimeoutMs(90, 5)).toBe(90_000);
});

test("what smarter-beat writes is RedBeat's JSON, byte for byte as Python's json.dumps lays it out", () => {
  expect(encodeMeta({ lastRunAt: Date.UTC(2026, 0, 2, 3, 4, 5, 678), totalRunCount: 9 })).toBe(
    '{"last_run_at": {"__type__": "datetime", "year": 2026, "month": 1, "day": 2, "hour": 3, "minute": 4, "second": 5, "microsecond": 678000, "timezone": 0.0}, "total_run_count": 9}',
  );
  expect(
    encodeDefinition({
      name: 'n',
      task: 't',
      args: [1, 'é'],
      kwargs: { a: 1 },
      options: { queue: 'q' },
      schedule: every(300),
      enabled: true,
    }),
  ).toBe(
    '{"name": "n", "task": "t", "args": [1, "\\u00e9"], "kwargs": {"a": 1}, "options": {"queue": "q"}, "schedule": {"__type__": "interval", "every": 300.0, "relative": false}, "enabled": true}',
  );
  expect(
    (
      JSON.parse(
        encodeDefinition({
          name: 'c',
          task: 't',
          args: [],
          kwargs: {},
          options: {},
          schedule: crontab({ minute: '*/15', hour: '3' }),
          enabled: true,
        }),
      ) as { schedule: unknown }
    ).schedule,
  ).toEqual({
    __type__: 'crontab',
    minute: '*/15',
    hour: '3',
    day_of_week: '*',
    day_of_month: '*',
    month_of_year: '*',
  });
});

test('datetimes RedBeat may have written: an offset in seconds, a zone name, UTC; a meta without a last run is due at once', () => {
  const dt = (tz: string) =>
    `{"last_run_at": {"__type__": "datetime", "year": 2026, "month": 7, "day": 1, "hour": 12, "minute": 0, "second": 0, "microsecond": 500000, "timezone": ${tz}}}`;
  const utc = Date.UTC(2026, 6, 1, 12, 0, 0, 500);
  expect(decodeMeta(dt('0.0')).lastRunAt).toBe(utc);
  expect(decodeMeta(dt('"UTC"')).lastRunAt).toBe(utc);
  expect(decodeMeta(dt('7200.0')).lastRunAt).toBe(utc - 7_200_000);
  expect(decodeMeta(dt('"Europe/Paris"')).lastRunAt).toBe(utc - 7_200_000); // CEST in July
  expect(decodeMeta(dt('"America/New_York"')).lastRunAt).toBe(utc + 4 * 3_600_000);
  expect(decodeMeta(null)).toEqual({ lastRunAt: null, totalRunCount: 0 });
  expect(decodeMeta('{"last_run_at": null}')).toEqual({ lastRunAt: null, totalRunCount: 0 });
  expect(() => decodeMeta(dt('"Nowhere/Land"'))).toThrow(RedBeatFormatError);
});

test('definitions: interval and crontab (fields as strings, numbers or lists), enabled defaults to true, rrule refused', () => {
  const d = decodeDefinition(
    '{"name": "x", "task": "t", "args": [1], "kwargs": {}, "options": {"queue": "q"}, "schedule": {"__type__": "crontab", "minute": 5, "hour": [1, 2], "day_of_week": "*", "day_of_month": "*", "month_of_year": "*"}}',
  );
  expect(d.enabled).toBe(true);
  expect(d.schedule.kind === 'crontab' && d.schedule.spec).toEqual({
    minute: '5',
    hour: '1,2',
    dayOfWeek: '*',
    dayOfMonth: '*',
    monthOfYear: '*',
  });
  expect(
    decodeDefinition(
      '{"name": "y", "task": "t", "schedule": {"__type__": "interval", "every": 1.5, "relative": false}, "enabled": false}',
    ),
  ).toMatchObject({ enabled: false, schedule: { kind: 'interval', seconds: 1.5 }, args: [], kwargs: {} });
  expect(() => decodeDefinition('{"name": "z", "task": "t", "schedule": {"__type__": "rrule", "freq": 3}}')).toThrow(
    /rrule/,
  );
});
