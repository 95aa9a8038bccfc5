"""Debian's Celery Beat with Smarter's settings (protocol 1), one short entry naming the queue in BEAT_QUEUE."""
import os
from datetime import timedelta

from celery import Celery

app = Celery("smarter", broker=os.environ["CELERY_BROKER_URL"])
app.conf.task_protocol = 1
app.conf.beat_schedule = {
    "short-entry": {"task": "test.add", "schedule": timedelta(seconds=1), "args": (20, 22),
                    "options": {"queue": os.environ["BEAT_QUEUE"]}},
}
