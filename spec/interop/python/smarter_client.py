"""Debian's Python Celery sending Smarter's operational tasks the way Smarter's callers do: protocol 1,
by registered name, with the callers' argument shapes.

Usage: smarter_client.py <broker> <backend> <queue> <ids-json> <mode>
mode "all": every task; mode "db-down": one create_charge while the test has hidden account_charge.
Prints one JSON object: each case's AsyncResult.get() value or raised exception.
"""
import json
import sys
from decimal import Decimal

from smarter_caller import smarter_app

broker, backend, queue, ids_json, mode = sys.argv[1:6]
ids = json.loads(ids_json)
app = smarter_app(broker, backend)

P = "smarter.apps."
out = {}


def outcome(result, timeout=30):
    try:
        return {"ok": result.get(timeout=timeout), "state": result.state}
    except Exception as exc:  # noqa: BLE001 - we report whatever Python raises
        return {"raised": type(exc).__name__, "module": type(exc).__module__, "args": [str(a) for a in exc.args],
                "state": result.state}


def send(name, args=None, kwargs=None):
    return app.send_task(P + name, args=args, kwargs=kwargs, queue=queue)


charge = dict(resource_locator="userprofile-rMTAwMDAwMQx", charge_type="completion", prompt_tokens=455,
              completion_tokens=154, total_tokens=609)

if mode == "db-down":
    out["charge_db_down"] = outcome(send("account.tasks.create_charge", kwargs=dict(charge, resource_locator="db-down")), 60)
    print(json.dumps(out, default=str))
    sys.exit(0)

request = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Bonjour, ça va ?"}], "session_key": "sk-py"}
response = {"id": "chatcmpl-1", "choices": [{"message": {"role": "assistant", "content": "Oui"}}]}
messages = [{"role": "user", "content": "Bonjour, ça va ?"}, {"role": "assistant", "content": "Oui"}]

pending = {
    "prompt_history": send("prompt.tasks.create_prompt_history", (ids["promptId"], request, response, messages)),
    "tool_call": send("prompt.tasks.create_prompt_tool_call_history",
                      (ids["promptId"], ids["pluginId"], "get_weather", json.dumps({"city": "x" * 400}), request, response)),
    "plugin_usage": send("prompt.tasks.create_prompt_plugin_usage",
                         kwargs={"prompt_id": ids["promptId"], "plugin_id": ids["pluginId"], "input_text": "weather?"}),
    "selector_history": send("plugin.tasks.create_plugin_selector_history",
                             kwargs={"plugin_id": ids["pluginId"], "user_id": ids["userId"], "input_text": "weather?",
                                     "messages": messages, "search_term": "weather"}),
    "plugin_charge": send("plugin.tasks.create_plugin_charge", kwargs={"plugin_id": ids["pluginId"]}),
    "charge": send("account.tasks.create_charge", kwargs=dict(charge, total_cost=Decimal("2.50"), provider="openai",
                                                              reference="fp_b547601dbd")),
    "charge_priced": send("account.tasks.create_charge", kwargs=dict(charge, resource_locator="priced",
                                                                     provider="OpenAI", model="gpt-test")),
    "llmclient_request": send("llmclient.tasks.create_llmclient_request.create_llmclient_request",
                              (ids["llmclientId"], request)),
    "create_prompt": send("prompt.tasks.create_prompt", ("sk-created-by-python", ids["llmclientId"])),
    "bad_missing_arg": send("prompt.tasks.create_prompt_history", (ids["promptId"],)),
    "bad_type": send("account.tasks.create_charge", kwargs=dict(charge, prompt_tokens="many")),
    "plugin_usage_incomplete": send("prompt.tasks.create_prompt_plugin_usage", kwargs={"prompt_id": ids["promptId"]}),
}
for key, result in pending.items():
    out[key] = outcome(result)
# Beat's tasks, after the charges above have run.
for key, name in [("aggregate_prompt_history", "prompt.tasks.aggregate_prompt_history"),
                  ("evaluate_budget_constraints", "account.tasks.evaluate_budget_constraints"),
                  ("charge_llmhost_computes", "llmhost.tasks.charge_llmhost_computes"),
                  ("purge_guardrail_events", "guardrail.tasks.purge_guardrail_events"),
                  ("aggregate_records", "account.tasks.aggregate_records")]:
    out[key] = outcome(send(name))
print(json.dumps(out, default=str))
