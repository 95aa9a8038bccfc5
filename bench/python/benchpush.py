"""Python Celery side of the push-back benchmark: bench.quick (stamps its finish, in ms, on `<key>:at` in the
counter Redis) for Python's worker, and `benchpush.py publish <queue> <n> <key> <countdown>`, which sends n of
them, every 50th with that countdown (0: none)."""
import os
import sys
import time

import redis
from celery import Celery

app = Celery("benchpush", broker=os.environ.get("CELERY_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//"))
app.conf.task_ignore_result = True
COUNTER = redis.Redis.from_url(os.environ.get("BENCH_COUNTER_URL", "redis://127.0.0.1:6379/0"))


@app.task(name="bench.quick")
def quick(key):
    COUNTER.rpush(f"{key}:at", int(time.time() * 1000))


def publish(queue, n, key, countdown):
    with app.connection_for_write() as conn:  # closed with the handshake: none of the last publishes lost
        producer = conn.Producer()
        for i in range(n):
            app.send_task("bench.quick", kwargs={"key": key}, queue=queue, producer=producer, ignore_result=True,
                          countdown=countdown if countdown and i % 50 == 49 else None)


if __name__ == "__main__":
    publish(sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5]))
