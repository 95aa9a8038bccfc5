/**
 * smarter-beat on RedBeat's keys, against the real Redis, with fixtures written as RedBeat 2.3.3 writes them
 * (sibson/redbeat `redbeat/schedulers.py`: the lock `SET <prefix>:lock <token> NX PX`, the hashes
 * `<prefix><name>` with `definition` and `meta`, the sorted set `<prefix>:schedule`, the set `<prefix>:statics`;
 * `redbeat/decoder.py` for the JSON). Smarter runs RedBeat in Kubernetes (`smarter/settings/base_aws.py`:
 * CELERY_BEAT_SCHEDULER = "redbeat.RedBeatScheduler", CELERY_REDBEAT_REDIS_URL = the broker's URL).
 */
import { execFileSync } from 'node:child_process';
import { Beat } from '../../beat/beat.js';
import { redBeat } from '../../beat/redbeat.js';
import { RedisStore } from '../../beat/store.js';
import { type Schedule, crontab, every } from '../../lib/beat/schedules.js';
import type { BeatEntry } from '../../tasks/beat-schedule.js';
import { nullLogger } from '../../lib/logger.js';
import { MemoryBroker, MemoryStore } from '../support/memory-broker.js';
import { REDIS_URL, type RedisScope, redisScope } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { pyDatetime, redBeatEntry as written } from '../support/redbeat-fixtures.js';

const redBeatEntry = (s: RedisScope, prefix: string, o: Parameters<typeof written>[2]) => written(s.redis, prefix, o);

const logger = nullLogger();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const entry = (name: string, schedule: Schedule = every(3600)): BeatEntry => ({
  name,
  task: `test.${name}`,
  schedule,
  args: [],
  kwargs: {},
  options: { queue: 'q' },
});

const HOURLY = '{"__type__": "interval", "every": 3600.0, "relative": false}';

function beatOn(
  prefix: string,
  entries: BeatEntry[],
  o: { loopMs?: number; lockTimeoutMs?: number; now?: () => number; legacyKey?: string } = {},
) {
  const { store, lock } = redBeat({
    url: REDIS_URL,
    keyPrefix: prefix,
    lockTimeoutMs: o.lockTimeoutMs ?? 2500,
    logger,
    legacyKey: o.legacyKey ?? null,
  });
  const mem = new MemoryStore();
  const beat = new Beat({
    entries,
    store,
    lock,
    broker: new MemoryBroker(mem),
    logger,
    maxLoopMs: o.loopMs ?? 300,
    ...(o.now ? { now: o.now } : {}),
  });
  const sent = (task: string) => mem.sent.filter((m) => m.message.properties.headers?.task === task).length;
  return { beat, sent, lock };
}

let scope: RedisScope;
let prefix: string;
beforeEach(() => {
  scope = redisScope();
  prefix = `${scope.prefix}redbeat:`;
});
afterEach(async () => {
  await scope.close();
});

test("own wiring: a lock held under RedBeat's key keeps smarter-beat from sending until it expires; then it takes the lock within one loop interval, extends it to the full timeout, and releases it on stop", async () => {
  const lockKey = `${prefix}:lock`;
  // redis-py's Lock.acquire for RedBeat: SET name token NX PX timeout (token: uuid1().hex).
  await scope.redis.set(lockKey, '0c1e8a44b61a11ee9d2b0242ac120002', 'PX', 3000, 'NX');
  await redBeatEntry(scope, prefix, {
    name: 'overdue',
    schedule: HOURLY,
    lastRunAt: Date.now() - 2 * 3_600_000,
    count: 3,
    score: 1,
    static: true,
  });
  const loopMs = 1000;
  const { beat, sent } = beatOn(prefix, [entry('overdue')], { loopMs, lockTimeoutMs: 4000 });
  await beat.start();
  try {
    let expiredAt = 0;
    await waitFor(
      async () => {
        if (
          (await scope.redis.exists(lockKey)) === 0 ||
          (await scope.redis.get(lockKey)) !== '0c1e8a44b61a11ee9d2b0242ac120002'
        ) {
          expiredAt = Date.now();
          return true;
        }
        expect(sent('test.overdue')).toBe(0);
        return undefined;
      },
      10_000,
      10,
    );
    await waitFor(() => (sent('test.overdue') === 1 ? true : undefined), 5000, 10);
    const takeoverMs = Date.now() - expiredAt;
    process.stdout.write(
      `redbeat lock: smarter-beat sent ${takeoverMs} ms after RedBeat's lock expired (loop interval ${loopMs} ms)\n`,
    );
    expect(takeoverMs).toBeLessThan(loopMs + 1000);
    // Extended to the full timeout on each tick, never beyond it (RedBeat's extend script, not redis-py's).
    for (let i = 0; i < 4; i += 1) {
      await sleep(700);
      const ttl = await scope.redis.pttl(lockKey);
      expect(ttl).toBeLessThanOrEqual(4000);
      expect(ttl).toBeGreaterThan(4000 - loopMs - 1500);
    }
    expect(sent('test.overdue')).toBe(1);
  } finally {
    await beat.stop();
  }
  expect(await scope.redis.exists(lockKey)).toBe(0);
});

test('own wiring: taking over from RedBeat: entries its meta says ran 10 s ago are not sent; an overdue one is sent once; a disabled one never; a runtime entry is sent; a static entry no longer shipped is removed', async () => {
  const now = Date.now();
  const nowS = Math.floor(now / 1000);
  await redBeatEntry(scope, prefix, {
    name: 'recent',
    schedule: HOURLY,
    lastRunAt: now - 10_000,
    count: 41,
    score: nowS + 3590,
    static: true,
  });
  await redBeatEntry(scope, prefix, {
    name: 'runtime-recent',
    schedule: '{"__type__": "interval", "every": 60.0, "relative": false}',
    lastRunAt: now - 10_000,
    count: 2,
    score: nowS + 50,
  });
  await redBeatEntry(scope, prefix, {
    name: 'overdue',
    schedule: HOURLY,
    lastRunAt: now - 3_700_000,
    count: 5,
    score: nowS - 100,
    static: true,
  });
  await redBeatEntry(scope, prefix, {
    name: 'disabled',
    schedule: HOURLY,
    lastRunAt: now - 3_700_000,
    count: 1,
    score: nowS - 100,
    enabled: false,
  });
  // Saved at run time without a meta (`RedBeatSchedulerEntry(...).save()` with no last run): due at once.
  await redBeatEntry(scope, prefix, { name: 'runtime-new', schedule: HOURLY, lastRunAt: null, score: nowS });
  await redBeatEntry(scope, prefix, {
    name: 'dropped',
    schedule: HOURLY,
    lastRunAt: now - 3_700_000,
    score: nowS - 100,
    static: true,
  });
  const { beat, sent } = beatOn(prefix, [entry('recent'), entry('overdue'), entry('new')]);
  await beat.start();
  try {
    await waitFor(() => (sent('test.overdue') === 1 && sent('test.runtime-new') === 1 ? true : undefined), 10_000);
    await sleep(2000);
  } finally {
    await beat.stop();
  }
  expect(sent('test.overdue')).toBe(1);
  expect(sent('test.runtime-new')).toBe(1);
  expect(sent('test.recent')).toBe(0);
  expect(sent('test.runtime-recent')).toBe(0);
  expect(sent('test.disabled')).toBe(0);
  expect(sent('test.new')).toBe(0);
  expect(sent('test.dropped')).toBe(0);
  // The last runs RedBeat wrote are kept; the overdue run is counted on; the dropped static is gone.
  expect(await scope.redis.hget(`${prefix}recent`, 'meta')).toBe(
    `{"last_run_at": ${pyDatetime(now - 10_000)}, "total_run_count": 41}`,
  );
  expect(await scope.redis.hget(`${prefix}overdue`, 'meta')).toContain('"total_run_count": 6');
  expect(await scope.redis.exists(`${prefix}dropped`)).toBe(0);
  expect(await scope.redis.zscore(`${prefix}:schedule`, `${prefix}dropped`)).toBeNull();
  expect((await scope.redis.smembers(`${prefix}:statics`)).sort()).toEqual(['new', 'overdue', 'recent']);
});

test('own wiring: a crontab entry saved as RedBeat stores one is sent at its minute, once', async () => {
  // The clock starts 1.5 s before a minute boundary M, so the test waits seconds, not a minute.
  const real = Date.now();
  const M = Math.ceil(real / 60_000) * 60_000 + 60_000;
  const shift = M - 1500 - real;
  const now = () => Date.now() + shift;
  const minute = new Date(M).getUTCMinutes();
  const schedule = `{"__type__": "crontab", "minute": "${minute}", "hour": "*", "day_of_week": "*", "day_of_month": "*", "month_of_year": "*"}`;
  // Saved at run time: RedBeat's save() writes the meta with last_run_at = the moment it was made, score = M.
  await redBeatEntry(scope, prefix, { name: 'cron', schedule, lastRunAt: now() - 30_000, score: M / 1000 });
  const { beat, sent } = beatOn(prefix, [], { loopMs: 200, now });
  await beat.start();
  try {
    await waitFor(() => (now() >= M - 150 ? true : undefined), 5000, 10);
    expect(sent('test.cron')).toBe(0);
    await waitFor(() => (sent('test.cron') === 1 ? true : undefined), 5000, 10);
    const late = now() - M;
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(1500);
    await sleep(1500);
    expect(sent('test.cron')).toBe(1);
  } finally {
    await beat.stop();
  }
  // Next due: the same minute of the next hour, as RedBeat scores it.
  expect(await scope.redis.zscore(`${prefix}:schedule`, `${prefix}cron`)).toBe(String((M + 3_600_000) / 1000));
});

test("own wiring: the hashes smarter-beat writes decode with RedBeat's decoder rules (Python, Celery's schedules): UTC datetimes, interval and crontab schedules", async () => {
  const { beat, sent } = beatOn(prefix, [
    entry('hourly'),
    {
      ...entry('cron', crontab({ minute: '*/15', hour: '3-5', dayOfWeek: 'mon-fri' })),
      args: [1, 'é'],
      kwargs: { days: 30 },
      options: { queue: 'q', expires: 600 },
    },
  ]);
  await redBeatEntry(scope, prefix, { name: 'ran', schedule: HOURLY, lastRunAt: 0, count: 9, score: 1 });
  await beat.start();
  try {
    await waitFor(() => (sent('test.ran') === 1 ? true : undefined), 10_000);
  } finally {
    await beat.stop();
  }
  const meta = await scope.redis.hget(`${prefix}ran`, 'meta');
  const out = JSON.parse(
    execFileSync('/usr/bin/python3', ['spec/support/redbeat_standin.py', 'decode', REDIS_URL, prefix], {
      encoding: 'utf8',
    }),
  ) as Record<string, Record<string, unknown>> & { statics: string[] };
  const ran = out[`${prefix}ran`];
  expect(ran?.total_run_count).toBe(10);
  expect(ran?.utcoffset).toBe(0);
  const lastRun = Date.parse(String(ran?.last_run_at));
  expect(Math.abs(lastRun - Date.now())).toBeLessThan(15_000);
  // The same instant to the millisecond as the meta's fields say.
  expect(meta).toContain(`"microsecond": ${new Date(lastRun).getUTCMilliseconds() * 1000}`);
  expect(out[`${prefix}hourly`]).toMatchObject({
    name: 'hourly',
    task: 'test.hourly',
    enabled: true,
    schedule: { every: 3600, relative: false },
    args: [],
    kwargs: {},
    options: { queue: 'q' },
    total_run_count: null,
  });
  expect(out[`${prefix}cron`]).toMatchObject({
    args: [1, 'é'],
    kwargs: { days: 30 },
    options: { queue: 'q', expires: 600 },
    schedule: { crontab: '<crontab: */15 3-5 mon-fri * * (m/h/d/dM/MY)>' },
  });
  expect(out.statics).toEqual(['cron', 'hourly']);
  // A new entry's score is its first due second: one interval after it was installed.
  expect(Number(out[`${prefix}hourly`]?.score) - Date.now() / 1000).toBeGreaterThan(3500);
});

test("own wiring: upgrading from smarter-beat's own Redis hash: the last runs kept there carry over into RedBeat's meta (run 10 s ago: not sent; overdue: sent once)", async () => {
  const legacyKey = `${scope.prefix}smarter-beat:schedule`;
  const old = new RedisStore(REDIS_URL, legacyKey);
  const now = Date.now();
  await old.save('recent', { lastRunAt: now - 10_000, totalRunCount: 12 });
  await old.save('overdue', { lastRunAt: now - 3_700_000, totalRunCount: 4 });
  await old.close();
  const { beat, sent } = beatOn(prefix, [entry('recent'), entry('overdue')], { legacyKey });
  await beat.start();
  try {
    await waitFor(() => (sent('test.overdue') === 1 ? true : undefined), 10_000);
    await sleep(1500);
  } finally {
    await beat.stop();
  }
  expect(sent('test.recent')).toBe(0);
  expect(sent('test.overdue')).toBe(1);
  expect(await scope.redis.hget(`${prefix}recent`, 'meta')).toBe(
    `{"last_run_at": ${pyDatetime(now - 10_000)}, "total_run_count": 12}`,
  );
  expect(await scope.redis.hget(`${prefix}overdue`, 'meta')).toContain('"total_run_count": 5');
});
