"""Real Python Celery (Debian's python3-celery) reading results that the TypeScript worker stored with
`result_extended`: AsyncResult's name, args, kwargs, worker, retries and queue, as Celery's own worker stores them.

Usage: extended_client.py <broker> <backend> <queue>
Prints one JSON object: for each case, the state and the extended fields AsyncResult reads.
"""
import json
import os
import sys

from celery import Celery

broker, backend, queue = sys.argv[1:4]
app = Celery("interop", broker=broker, backend=backend)
app.conf.broker_transport_options = json.loads(os.environ.get("BROKER_TRANSPORT_OPTIONS", "{}"))
app.conf.broker_connection_retry_on_startup = True
app.conf.result_extended = True


def fields(result):
    try:
        result.get(timeout=20, propagate=False)
    except Exception:  # noqa: BLE001 - the fields are what is checked
        pass
    return {"state": result.state, "name": result.name, "args": result.args, "kwargs": result.kwargs,
            "worker": result.worker, "retries": result.retries, "queue": result.queue}


out = {
    "success": fields(app.send_task("test.add", args=(2, 3), queue=queue)),
    "keyword": fields(app.send_task("test.add", kwargs={"x": 1, "y": 41}, queue=queue)),
    "failure": fields(app.send_task("test.fail", args=("boom",), queue=queue)),
}
print(json.dumps(out))
