"""The remote-control calls Flower's pool buttons make (flower/api/control.py: WorkerPoolGrow, WorkerPoolShrink,
WorkerPoolAutoscale, WorkerPoolRestart), made with Debian's Python Celery exactly as Flower makes them, each followed
by the `stats` Flower's worker page reads the pool size from.

Usage: flower_pool_calls.py <broker> <worker> <step>...   where a step is grow:N, shrink:N, autoscale:MIN:MAX, restart
Prints one JSON list: for each step, Flower's reply, whether Flower would call it a success ('ok' in the
reply), and the worker's `pool.max-concurrency` afterwards.
"""
import json
import sys

from celery import Celery

broker, worker = sys.argv[1:3]
app = Celery("flower", broker=broker)
out = []
for step in sys.argv[3:]:
    op, *nums = step.split(":")
    if op == "grow":
        response = app.control.pool_grow(n=int(nums[0]), reply=True, destination=[worker])
    elif op == "shrink":
        response = app.control.pool_shrink(n=int(nums[0]), reply=True, destination=[worker])
    elif op == "autoscale":
        response = app.control.autoscale(min=int(nums[0]), max=int(nums[1]), reply=True, destination=[worker])
    else:
        response = app.control.pool_restart(reply=True, destination=[worker])
    stats = app.control.inspect(destination=[worker], timeout=5).stats() or {}
    out.append({
        "step": step,
        "response": response,
        "flower_ok": bool(response) and "ok" in response[0][worker],
        "max_concurrency": stats.get(worker, {}).get("pool", {}).get("max-concurrency"),
    })
print(json.dumps(out))
