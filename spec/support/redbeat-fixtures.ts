/**
 * RedBeat's Redis layout written by hand from its source (sibson/redbeat 2.3.3, `redbeat/schedulers.py`,
 * `redbeat/decoder.py`), with Python's `json.dumps` spacing, as a RedBeat scheduler leaves it.
 */
import type { Redis } from 'ioredis';

/** A datetime as RedBeat's encoder writes one from Celery's UTC `app.now()` (offset 0.0). */
export function pyDatetime(ms: number): string {
  const d = new Date(ms);
  return `{"__type__": "datetime", "year": ${d.getUTCFullYear()}, "month": ${d.getUTCMonth() + 1}, "day": ${d.getUTCDate()}, "hour": ${d.getUTCHours()}, "minute": ${d.getUTCMinutes()}, "second": ${d.getUTCSeconds()}, "microsecond": ${d.getUTCMilliseconds() * 1000}, "timezone": 0.0}`;
}

export const interval = (seconds: number) =>
  `{"__type__": "interval", "every": ${seconds.toFixed(1)}, "relative": false}`;

/** An entry as RedBeat's `RedBeatSchedulerEntry.save()` and `_next_instance()` leave it (`static`: listed in statics). */
export async function redBeatEntry(
  redis: Redis,
  prefix: string,
  o: {
    name: string;
    schedule: string;
    lastRunAt: number | null;
    count?: number;
    enabled?: boolean;
    score: number;
    static?: boolean;
    task?: string;
    queue?: string;
  },
): Promise<void> {
  const key = `${prefix}${o.name}`;
  const definition = `{"name": "${o.name}", "task": "${o.task ?? `test.${o.name}`}", "args": [], "kwargs": {}, "options": {"queue": "${o.queue ?? 'q'}"}, "schedule": ${o.schedule}, "enabled": ${o.enabled === false ? 'false' : 'true'}}`;
  await redis.hset(key, 'definition', definition);
  if (o.lastRunAt !== null) {
    await redis.hset(
      key,
      'meta',
      `{"last_run_at": ${pyDatetime(o.lastRunAt)}${o.count !== undefined ? `, "total_run_count": ${o.count}` : ''}}`,
    );
  }
  await redis.zadd(`${prefix}:schedule`, o.score, key);
  if (o.static) await redis.sadd(`${prefix}:statics`, o.name);
}
