"""Debian's Python Celery calling Smarter's llmhost tasks as Smarter does: protocol 1, tasks declared with
Smarter's names on the infrastructure queue, reconcile_llmhost_compute queued with positional args
(`apply_async((compute_id,), countdown=…)`, llmhost/tasks/__init__.py).

Usage: llmhost_client.py <broker> <infra-queue> <mode> <json>
mode "launch": launch_llmhost.delay(json.llmhost_id)
mode "reconcile": reconcile_llmhost_compute.apply_async((json.compute_id,), countdown=json.countdown)
Prints one JSON object with the task id.
"""
import json
import sys

from smarter_caller import smarter_app

broker, infra_queue, mode, params_json = sys.argv[1:5]
params = json.loads(params_json)
app = smarter_app(broker)

H = "smarter.apps.llmhost.tasks."


@app.task(name=H + "launch_llmhost", queue=infra_queue)
def launch_llmhost(llmhost_id):
    raise RuntimeError("runs on the worker")


@app.task(name=H + "reconcile_llmhost_compute", queue=infra_queue)
def reconcile_llmhost_compute(compute_id, attempt=1):
    raise RuntimeError("runs on the worker")


if mode == "launch":
    print(json.dumps({"id": launch_llmhost.delay(params["llmhost_id"]).id}))
elif mode == "reconcile":
    result = reconcile_llmhost_compute.apply_async((params["compute_id"],), countdown=params["countdown"])
    print(json.dumps({"id": result.id}))
else:
    raise SystemExit("unknown mode " + mode)
