"""Debian's Python Celery calling Smarter's infrastructure tasks as Smarter's callers do: protocol 1, through
`.delay()` on tasks declared with Smarter's names and queues (llmclient/receivers.py, the custom domain broker).

Usage: infra_client.py <broker> <backend> <infra-queue> <op-queue> <mode> <json>
mode "deploy": deploy_default_api.delay(llmclient_id=json.llmclient_id)
mode "register": register_custom_domain.delay(account_id=json.account_id, domain_name=json.domain_name)
mode "charges": json.n create_charge.delay(...) on the operational queue, with json.locator
Prints one JSON object with the task ids.
"""
import json
import sys

from smarter_caller import smarter_app

broker, backend, infra_queue, op_queue, mode, params_json = sys.argv[1:7]
params = json.loads(params_json)
app = smarter_app(broker, backend)

L = "smarter.apps.llmclient.tasks."


@app.task(name=L + "deploy_default_api.deploy_default_api", queue=infra_queue)
def deploy_default_api(llmclient_id, with_domain_verification=True):
    raise RuntimeError("runs on the worker")


@app.task(name=L + "register_custom_domain.register_custom_domain", queue=infra_queue)
def register_custom_domain(account_id, domain_name):
    raise RuntimeError("runs on the worker")


@app.task(name="smarter.apps.account.tasks.create_charge", queue=op_queue)
def create_charge(*args, **kwargs):
    raise RuntimeError("runs on the worker")


if mode == "deploy":
    print(json.dumps({"id": deploy_default_api.delay(llmclient_id=params["llmclient_id"]).id}))
elif mode == "register":
    print(json.dumps({"id": register_custom_domain.delay(account_id=params["account_id"], domain_name=params["domain_name"]).id}))
elif mode == "charges":
    ids = [
        create_charge.delay(resource_locator=params["locator"], charge_type="completion", prompt_tokens=10,
                            completion_tokens=5, total_tokens=15).id
        for _ in range(params["n"])
    ]
    print(json.dumps({"ids": len(ids)}))
else:
    sys.exit("unknown mode " + mode)
