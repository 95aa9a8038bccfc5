"""RedBeat 2.3.3 (sibson/redbeat, redbeat/schedulers.py and redbeat/decoder.py) as far as the Beat tests need it,
written from its source with redis-py and Celery's own schedules, since RedBeat is not packaged here.

  decode URL PREFIX           print each entry of the schedule, decoded by RedBeat's decoder rules, as JSON
  run URL PREFIX TIMEOUT MAX  be a RedBeat scheduler: take the lock as RedBeat does (redis-py Lock, NX with a
                              timeout, extended to the full timeout each tick), send due entries (one JSON line
                              {"sent": name, "run": n} each, on stdout), write meta and score as RedBeat does;
                              SIGTERM releases the lock, as RedBeat's close() does.
"""
import json
import signal
import sys
import time
from datetime import MINYEAR, datetime, timedelta, timezone

import redis
from celery import Celery
from celery.schedules import crontab, schedule

try:
    import zoneinfo
except ImportError:  # pragma: no cover
    zoneinfo = None

APP = Celery("redbeat-standin")

# RedBeat's extend: to the full timeout, not added to the time left.
EXTEND_TO = """
local token = redis.call('get', KEYS[1])
if not token or token ~= ARGV[1] then return 0 end
local expiration = redis.call('pttl', KEYS[1])
if not expiration then expiration = 0 end
if expiration < 0 then return 0 end
redis.call('pexpire', KEYS[1], ARGV[2])
return 1
"""


def decode_hook(d):
    """RedBeat's RedBeatJSONDecoder.dict_to_object."""
    if "__type__" not in d:
        return d
    kind = d.pop("__type__")
    if kind == "datetime":
        zone = d.pop("timezone", "UTC")
        try:
            tz = timezone(timedelta(minutes=(zone / 60)))
        except TypeError:
            tz = zoneinfo.ZoneInfo(zone)
        return datetime(tzinfo=tz, **d)
    if kind == "interval":
        return schedule(run_every=d["every"], relative=d["relative"])
    if kind == "crontab":
        return crontab(**d)
    d["__type__"] = kind
    return d


def loads(text):
    return json.loads(text, object_hook=decode_hook)


class Encoder(json.JSONEncoder):
    """RedBeat's RedBeatJSONEncoder, for datetimes (all the meta holds)."""

    def default(self, obj):
        if isinstance(obj, datetime):
            if obj.tzinfo is None:
                tz = "UTC"
            elif hasattr(obj.tzinfo, "key"):
                tz = obj.tzinfo.key
            else:
                tz = obj.utcoffset().total_seconds()
            return {"__type__": "datetime", "year": obj.year, "month": obj.month, "day": obj.day, "hour": obj.hour,
                    "minute": obj.minute, "second": obj.second, "microsecond": obj.microsecond, "timezone": tz}
        return super().default(obj)


def to_timestamp(dt):
    import calendar
    return calendar.timegm(dt.utctimetuple())


def load(r, key):
    definition, meta = r.hmget(key, "definition", "meta")
    if not definition:
        return None
    d = loads(definition)
    m = loads(meta) if meta else {"last_run_at": None}
    return d, m


def decode(url, prefix):
    r = redis.StrictRedis.from_url(url, decode_responses=True)
    out = {}
    for key, score in r.zrange(prefix + ":schedule", 0, -1, withscores=True):
        loaded = load(r, key)
        if loaded is None:
            continue
        d, m = loaded
        s = d["schedule"]
        last = m.get("last_run_at")
        out[key] = {
            "name": d["name"], "task": d["task"], "args": list(d["args"]), "kwargs": d["kwargs"], "options": d["options"],
            "enabled": d["enabled"], "score": score,
            "schedule": {"every": s.run_every.total_seconds(), "relative": s.relative} if isinstance(s, schedule) and not isinstance(s, crontab)
            else {"crontab": str(s)},
            "last_run_at": last.isoformat() if last else None,
            "utcoffset": last.utcoffset().total_seconds() if last else None,
            "total_run_count": m.get("total_run_count"),
        }
    out["statics"] = sorted(r.smembers(prefix + ":statics"))
    print(json.dumps(out))


def run(url, prefix, lock_timeout, max_interval):
    r = redis.StrictRedis.from_url(url, decode_responses=True)
    lock = r.lock(prefix + ":lock", timeout=lock_timeout, sleep=max_interval)
    lock.lua_extend = r.register_script(EXTEND_TO)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    while not stopping and not lock.acquire(blocking=False):
        time.sleep(max_interval)
    if stopping:
        return
    print(json.dumps({"acquired": True}), flush=True)
    while not stopping:
        lock.extend(int(lock_timeout))  # raises LockNotOwnedError when lost, as in RedBeat's tick
        now = APP.now()
        wait = [max_interval]
        for key in r.zrangebyscore(prefix + ":schedule", 0, to_timestamp(now)):
            if stopping:
                break
            loaded = load(r, key)
            if loaded is None:
                continue
            d, m = loaded
            if not d.get("enabled", True):
                continue
            sched = d["schedule"]
            last = m.get("last_run_at")
            due, nxt = sched.is_due(last or datetime(MINYEAR, 1, 2, tzinfo=sched.tz))
            if due:
                run_at = APP.now()
                count = m.get("total_run_count", 0) + 1
                print(json.dumps({"sent": d["name"], "run": count}), flush=True)
                meta = {"last_run_at": run_at, "total_run_count": count}
                due_at = run_at + timedelta(seconds=sched.remaining_estimate(run_at).total_seconds())
                with r.pipeline() as pipe:
                    pipe.hset(key, "meta", json.dumps(meta, cls=Encoder))
                    pipe.zadd(prefix + ":schedule", {key: to_timestamp(due_at)})
                    pipe.execute()
            wait.append(nxt)
        time.sleep(max(0.0, min(wait)))
    if lock.owned():
        lock.release()
    print(json.dumps({"released": True}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "decode":
        decode(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
