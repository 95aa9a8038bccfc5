"""A Python caller that sends tasks only the Python fallback worker implements to the queue our worker serves.

Usage: forward_client.py <broker> <backend> <queue> <count>
Prints one JSON object: the single call's result, and the results of <count> more calls.
"""
import json
import sys

from celery import Celery
from celery.result import ResultSet

broker, backend, queue, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
app = Celery("caller", broker=broker, backend=backend)

out = {"single": app.send_task("legacy.verify_domain", args=("example.com",), queue=queue).get(timeout=30)}
if count > 0:
    names = ["legacy.double", "legacy.verify_domain"]
    sent = [app.send_task("legacy.double", args=(i,), queue=queue) if i % 2 == 0
            else app.send_task("legacy.verify_domain", args=(f"d{i}.example",), queue=queue) for i in range(count)]
    out["many"] = ResultSet(sent).get(timeout=120)
print(json.dumps(out))
