"""Python Celery side of the benchmarks: the producer, and the prefork worker to compare against."""
import os
import sys

from celery import Celery

app = Celery("benchapp", broker=os.environ.get("CELERY_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//"))
app.conf.task_acks_late = True
app.conf.task_ignore_result = True
app.conf.worker_prefetch_multiplier = 4


def publish(queue: str, count: int, countdown: float | None = None) -> None:
    # A connection of its own, closed with the protocol's handshake: the broker answers close-ok only after every
    # publish before it, where a pooled connection left to the process's exit loses the last ~100 of 20,000.
    with app.connection_for_write() as conn:
        producer = conn.Producer()
        for i in range(count):
            app.send_task("celery.accumulate", args=(i, i + 1), queue=queue, ignore_result=True, producer=producer,
                          countdown=countdown)


if __name__ == "__main__":
    publish(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else None)
