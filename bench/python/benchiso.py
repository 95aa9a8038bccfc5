"""Python Celery side of the isolation benchmark: Smarter's defaults (early ack, prefetch 4 x concurrency),
and a check task that reschedules itself with apply_async(countdown=...), as ADR-030 has Python do it."""
import json
import os
import sys
import time

from celery import Celery

from resultclock import ResultClock

BACKEND = os.environ.get("CELERY_RESULT_BACKEND", "redis://127.0.0.1:6379/0")
app = Celery("benchiso", broker=os.environ.get("CELERY_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//"),
             backend=BACKEND)


@app.task(name="bench.check", bind=True, ignore_result=True)
def check(self, every=3, attempt=0):
    check.apply_async(kwargs={"every": every, "attempt": attempt + 1}, countdown=every,
                      queue=self.request.delivery_info["routing_key"])


def storm(queue, count, every, spread=False):
    """count checks that reschedule themselves every `every` s; spread: the first runs staggered over one
    interval (deployments created at different times: a steady count/every reschedules per second), else
    all together (bursts of count every `every` s)."""
    with app.connection_for_write() as conn:  # closed with the handshake: none of the last publishes lost
        producer = conn.Producer()
        for i in range(count):
            countdown = every * (i + 1) / count if spread else every
            app.send_task("bench.check", kwargs={"every": every}, queue=queue, countdown=countdown, producer=producer,
                          ignore_result=True)


def stream(queue, rate, seconds):
    """Sends celery.accumulate at a fixed rate; latency = the result's PUBLISH seen here - send time, both on
    this process's clock (resultclock.py)."""
    clock = ResultClock(BACKEND)
    sent = []
    start = time.monotonic()
    n = int(rate * seconds)
    with app.connection_for_write() as conn:  # closed with the handshake: none of the last publishes lost
        producer = conn.Producer()
        for i in range(n):
            due = start + i / rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            t = time.monotonic()
            r = app.send_task("celery.accumulate", args=(i,), queue=queue, producer=producer)
            sent.append((r.id, t))
    arrived = clock.wait([k for k, _ in sent])
    clock.close()
    lat = sorted((arrived[k][0] - t) * 1000 for k, t in sent
                 if k in arrived and json.loads(arrived[k][1]).get("status") == "SUCCESS")
    missing = len(sent) - len(lat)
    app.backend.client.delete(*[f"celery-task-meta-{k}" for k, _ in sent])
    pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else None
    print(json.dumps({"count": len(lat), "missing": missing, "p50": pick(0.5), "p99": pick(0.99)}))


if __name__ == "__main__":
    if sys.argv[1] == "storm":
        storm(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), len(sys.argv) > 5 and sys.argv[5] == "spread")
    else:
        stream(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
