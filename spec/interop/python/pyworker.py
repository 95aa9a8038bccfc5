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
