"""Debian's Python Celery sending a batch of Smarter's tasks as Smarter's callers do: protocol 1
(smarter/smarter/lib/celery_conf/__init__.py sets task_protocol = 1), by registered name, to the queue the task is
declared on, with the arguments given.

Usage: send.py <broker> <backend> <batch.json>
The batch is a JSON list of {"key", "name", "queue", "args", "kwargs"}; {"__decimal__": "2.50"} becomes a Decimal
(kombu sends it as its decimal marker, as create_charge's total_cost arrives from Smarter).
Prints one JSON object: key -> task id.
"""
import json
import sys
from decimal import Decimal

from celery import Celery

broker, backend, path = sys.argv[1:4]
with open(path, encoding="utf-8") as f:
    batch = json.load(f)

app = Celery("smarter", broker=broker, backend=backend)
app.conf.task_protocol = 1
app.conf.broker_connection_retry_on_startup = True


def revive(value):
    if isinstance(value, dict):
        if set(value) == {"__decimal__"}:
            return Decimal(value["__decimal__"])
        return {k: revive(v) for k, v in value.items()}
    if isinstance(value, list):
        return [revive(v) for v in value]
    return value


ids = {}
with app.producer_or_acquire() as producer:
    for m in batch:
        result = app.send_task(m["name"], args=revive(m.get("args")), kwargs=revive(m.get("kwargs")),
                               queue=m["queue"], producer=producer)
        ids[m["key"]] = result.id
print(json.dumps(ids))
