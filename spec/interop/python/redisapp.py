"""A Celery app for the `celery` CLI on a Redis broker under test: `celery -A redisapp -b URL inspect ping`.
The key prefix of the test comes from BROKER_TRANSPORT_OPTIONS."""
import json
import os

from celery import Celery

app = Celery("redisapp")
app.conf.broker_transport_options = json.loads(os.environ.get("BROKER_TRANSPORT_OPTIONS", "{}"))
