"""Real Python Celery (Debian's python3-celery) sending tasks to the TypeScript worker.

Usage: client.py <broker> <backend> <protocol> <queue>
Prints one JSON object: for each case, what AsyncResult.get() returned or raised.
"""
import json
import os
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from decimal import Decimal

from celery import Celery, chain

broker, backend, protocol, queue = sys.argv[1:5]
app = Celery("interop", broker=broker, backend=backend)
# A Redis broker under test runs under its own kombu global_keyprefix (and visibility_timeout when set).
app.conf.broker_transport_options = json.loads(os.environ.get("BROKER_TRANSPORT_OPTIONS", "{}"))
app.conf.task_protocol = int(protocol)
app.conf.broker_connection_retry_on_startup = True

out = {}


def outcome(result, timeout=20):
    try:
        value = result.get(timeout=timeout)
        return {"ok": value, "state": result.state}
    except Exception as exc:  # noqa: BLE001 - we report whatever Python raises
        return {"raised": type(exc).__name__, "module": type(exc).__module__, "args": [str(a) for a in exc.args],
                "state": result.state}


def send(name, args=None, kwargs=None, **opts):
    return app.send_task(name, args=args, kwargs=kwargs, queue=queue, **opts)


out["positional"] = outcome(send("test.add", (2, 3)))
out["keyword"] = outcome(send("test.add", kwargs={"x": 1, "y": 41}))
out["types"] = outcome(send("test.echo", (Decimal("1.10"), datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc),
                                          uuid.UUID("12345678123456781234567812345678"))))
t0 = time.time()
r = send("test.add", (1, 1), countdown=2)
out["countdown"] = outcome(r)
out["countdown_elapsed"] = time.time() - t0
out["expired"] = outcome(send("test.add", (1, 1), expires=datetime.now(timezone.utc) - timedelta(seconds=30)))
out["unknown"] = outcome(send("test.nope", (1,)))
out["failing"] = outcome(send("test.fail", ("boom",)))
out["bad_args"] = outcome(send("test.add", (1, 2, 3)))
out["retry"] = outcome(send("test.flaky", (2,)))
out["chain"] = outcome(chain(app.signature("test.add", (1, 1), queue=queue),
                             app.signature("test.add", (10,), queue=queue)).apply_async())
print(json.dumps(out, default=str))
