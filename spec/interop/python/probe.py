"""Messages from real Python Celery (py-amqp) for the fault-probe regression tests.

Usage: probe.py <broker> <queue> <command> [json-args]
  send <json {task, args, headers, id?, countdown?, eta?}>   sends one task, prints {"id": ...}
  dead-letters                                             reads <queue>.dead_letter (acked), prints each
                                                           message's headers with their Python types
"""
import json
import sys
from datetime import datetime

from celery import Celery

broker, queue, command = sys.argv[1:4]
app = Celery("probe", broker=broker)
app.conf.broker_connection_retry_on_startup = True


def typed(v):
    if isinstance(v, dict):
        return {k: typed(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [typed(x) for x in v]
    return {"type": type(v).__name__, "repr": repr(v)}


def untyped(v):
    """{"float": "1e20"} is sent as a Python float (JSON cannot say so); {"repeat": ["x", n]} as "x" * n."""
    if isinstance(v, dict) and list(v) == ["float"]:
        return float(v["float"])
    if isinstance(v, dict) and list(v) == ["repeat"]:
        return v["repeat"][0] * v["repeat"][1]
    if isinstance(v, dict):
        return {k: untyped(x) for k, x in v.items()}
    return v


if command == "send":
    spec = untyped(json.loads(sys.argv[4]))
    opts = {}
    if "eta" in spec:
        opts["eta"] = datetime.fromisoformat(spec["eta"])
    r = app.send_task(spec["task"], args=spec.get("args", []), queue=queue, headers=spec.get("headers"),
                      task_id=spec.get("id"), **opts)
    print(json.dumps({"id": r.id}))
elif command == "dead-letters":
    out = []
    with app.connection() as conn:
        ch = conn.default_channel
        while True:
            m = ch.basic_get(queue + ".dead_letter", no_ack=True)
            if m is None:
                break
            out.append(typed(m.properties.get("application_headers", {})))
    print(json.dumps(out))
else:
    raise SystemExit("unknown command " + command)
