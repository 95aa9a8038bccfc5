"""A Python Celery worker app for interop tests: it must accept what our worker publishes (retries)."""
import json
import os

from celery import Celery

app = Celery("pyworker", broker=os.environ["CELERY_BROKER_URL"], backend=os.environ["CELERY_RESULT_BACKEND"])
# A Redis broker under test runs under its own kombu global_keyprefix (and visibility_timeout when set).
app.conf.broker_transport_options = json.loads(os.environ.get("BROKER_TRANSPORT_OPTIONS", "{}"))


@app.task(name="test.handoff", bind=True)
def handoff(self, *args, **kwargs):
    return {
        "id": self.request.id,
        "retries": self.request.retries,
        "parent_id": self.request.parent_id,
        "root_id": self.request.root_id,
        "args": list(args),
        "kwargs": kwargs,
        # Celery 5.2 merges custom headers into the request itself; later versions also keep request.headers.
        "custom": vars(self.request).get("x-custom") or (self.request.headers or {}).get("x-custom"),
        "worker": "python",
    }


@app.task(name="test.stamp", bind=True)
def stamp(self, key, due_ms):
    """Counts each completed run per task id in Redis (the same keys as our test.stamp)."""
    import time
    import redis
    time.sleep(float(os.environ.get("STAMP_RUN_MS", "0")) / 1000)
    r = redis.Redis.from_url(os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0"))
    r.hincrby(key + ":runs", self.request.id, 1)
    r.hincrby(key + ":by", "python", 1)
    r.hset(key + ":late", self.request.id, int(time.time() * 1000) - due_ms)
    return "stamped"
