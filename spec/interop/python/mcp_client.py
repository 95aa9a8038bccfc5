"""Debian's Python Celery calling Smarter's MCPClient and provider tasks by name, with Smarter's argument
shapes: `refresh_mcpclient.delay(mcpclient_id)` (positional, as mcpclient/receivers.py), `refresh_mcpclients()`
(as Beat), `verify_provider.delay(provider_id=…)` (as provider/receivers.py).

Usage: mcp_client.py <broker> <backend> <queue> <mode> <json>
mode "refresh": json.id → {"result": <status or None>}
mode "refresh_all": → {"result": <count>}
mode "bad": app.send_task("…refresh_mcpclient", args=json.args, kwargs=json.kwargs) → {"state", "exc_type", "message"}
mode "verify_provider": json.id → {"state", "exc_type", "message"} after the task has finished (AsyncResult.get)
"""
import json
import sys

from celery import Celery

broker, backend, queue, mode, params_json = sys.argv[1:6]
params = json.loads(params_json)
app = Celery("smarter", broker=broker, backend=backend)
app.conf.broker_connection_retry_on_startup = True


@app.task(name="smarter.apps.mcpclient.tasks.refresh_mcpclient", queue=queue)
def refresh_mcpclient(mcpclient_id):
    raise RuntimeError("runs on the worker")


@app.task(name="smarter.apps.mcpclient.tasks.refresh_mcpclients", queue=queue)
def refresh_mcpclients():
    raise RuntimeError("runs on the worker")


@app.task(name="smarter.apps.provider.tasks.verify_provider", queue=queue)
def verify_provider(provider_id):
    raise RuntimeError("runs on the worker")


if mode == "refresh":
    print(json.dumps({"result": refresh_mcpclient.delay(params["id"]).get(timeout=60)}))
elif mode == "refresh_all":
    print(json.dumps({"result": refresh_mcpclients.delay().get(timeout=60)}))
elif mode == "bad":
    # send_task: apply_async would refuse these arguments before sending (Celery's check_arguments).
    r = app.send_task(refresh_mcpclient.name, args=params.get("args", []), kwargs=params.get("kwargs", {}), queue=queue)
    try:
        print(json.dumps({"state": r.state, "result": r.get(timeout=60)}))
    except Exception as e:  # noqa: BLE001 - the worker's exception, re-raised by Celery
        print(json.dumps({"state": r.state, "exc_type": type(e).__name__, "message": str(e)}))
elif mode == "verify_provider":
    r = verify_provider.delay(provider_id=params["id"])
    try:
        r.get(timeout=90)
        print(json.dumps({"state": r.state}))
    except Exception as e:  # noqa: BLE001 - the worker's exception, re-raised by Celery
        print(json.dumps({"state": r.state, "exc_type": type(e).__name__, "message": str(e)}))
else:
    raise SystemExit("unknown mode " + mode)
