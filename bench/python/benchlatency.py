"""Latency benchmark, Python side: the bench.stamp task (returns the time it started) for Python's worker, and
`benchlatency.py stream <queue> <rate> <seconds>`, which sends bench.stamp at a fixed rate and prints, per task,
publish -> task start (the stamp) and publish -> result (its PUBLISH seen by this producer), in ms, as JSON.
Every time is CLOCK_MONOTONIC (resultclock.py says why)."""
import json
import os
import sys
import time

from celery import Celery

from resultclock import ResultClock

BACKEND = os.environ.get("CELERY_RESULT_BACKEND", "redis://127.0.0.1:6379/0")
app = Celery("benchlatency", broker=os.environ.get("CELERY_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//"),
             backend=BACKEND)


@app.task(name="bench.stamp")
def stamp():
    return time.monotonic()


def stream(queue, rate, seconds):
    clock = ResultClock(BACKEND)
    sent = []
    start = time.monotonic()
    with app.connection_for_write() as conn:  # closed with the handshake: none of the last publishes lost
        producer = conn.Producer()
        for i in range(int(rate * seconds)):
            pause = start + i / rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            t = time.monotonic()
            sent.append((app.send_task("bench.stamp", queue=queue, producer=producer).id, t))
    arrived = clock.wait([k for k, _ in sent])
    clock.close()
    began, done, missing = [], [], 0
    for k, t in sent:
        if k not in arrived:
            missing += 1
            continue
        seen, payload = arrived[k]
        meta = json.loads(payload)
        if meta.get("status") != "SUCCESS":
            missing += 1
            continue
        began.append((float(meta["result"]) - t) * 1000)
        done.append((seen - t) * 1000)
    app.backend.client.delete(*[f"celery-task-meta-{k}" for k, _ in sent])
    print(json.dumps({"start": began, "result": done, "missing": missing}))


if __name__ == "__main__":
    stream(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
