"""Latency benchmark, Python side: the bench.stamp task (returns the time it started) for Python's worker, and
`benchlatency.py stream <queue> <rate> <seconds>`, which sends bench.stamp at a fixed rate and prints, per task,
publish -> task start (the stamp) and publish -> result (date_done), in ms, as JSON."""
import json
import os
import sys
import time
from datetime import datetime, timezone

import redis
from celery import Celery

BACKEND = os.environ.get("CELERY_RESULT_BACKEND", "redis://127.0.0.1:6379/0")
app = Celery("benchlatency", broker=os.environ.get("CELERY_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//"),
             backend=BACKEND)


@app.task(name="bench.stamp")
def stamp():
    return time.time()


def stream(queue, rate, seconds):
    sent = []
    start = time.time()
    with app.producer_or_acquire() as producer:
        for i in range(int(rate * seconds)):
            pause = start + i / rate - time.time()
            if pause > 0:
                time.sleep(pause)
            t = time.time()
            sent.append((app.send_task("bench.stamp", queue=queue, producer=producer).id, t))
    r = redis.Redis.from_url(BACKEND)
    pending = dict(sent)
    began, done = [], []
    deadline = time.time() + 60
    while pending and time.time() < deadline:
        keys = list(pending)
        for k, v in zip(keys, r.mget([f"celery-task-meta-{k}" for k in keys])):
            meta = json.loads(v) if v else None
            if meta and meta.get("status") == "SUCCESS":
                t = pending.pop(k)
                began.append((float(meta["result"]) - t) * 1000)
                finished = datetime.fromisoformat(meta["date_done"].replace("Z", "+00:00"))
                if finished.tzinfo is None:  # Celery 5.2 stores naive UTC
                    finished = finished.replace(tzinfo=timezone.utc)
                finished = finished.timestamp()
                done.append((finished - t) * 1000)
        time.sleep(0.2)
    r.delete(*[f"celery-task-meta-{k}" for k, _ in sent])
    print(json.dumps({"start": began, "result": done, "missing": len(pending)}))


if __name__ == "__main__":
    stream(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
