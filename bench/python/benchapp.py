"""Python Celery side of the benchmarks: the producer, and the prefork worker to compare against."""
import os
import sys

from celery import Celery

app = Celery("benchapp", broker=os.environ.get("CELERY_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//"))
app.conf.task_acks_late = True
app.conf.task_ignore_result = True
app.conf.worker_prefetch_multiplier = 4


def publish(queue: str, count: int, countdown: float | None = None) -> None:
    with app.producer_or_acquire() as producer:
        for i in range(count):
            app.send_task("celery.accumulate", args=(i, i + 1), queue=queue, ignore_result=True, producer=producer,
                          countdown=countdown)


if __name__ == "__main__":
    publish(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else None)
