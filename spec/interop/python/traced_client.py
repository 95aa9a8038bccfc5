"""Real Python Celery sending one task with W3C trace context, where opentelemetry-instrumentation-celery puts it.

The instrumentation's before_task_publish handler calls opentelemetry.propagate.inject(headers) on the
`headers` the signal is given: the message headers, which Celery then publishes. The same is done here by hand
(the instrumentation itself is not installed on this machine): traceparent, tracestate and baggage set as keys
of that dict, on protocol 1 and 2.

Usage: traced_client.py <broker> <protocol> <queue> <task> <traceparent> <args-json> [<kwargs-json>]
Prints the task id.
"""
import json
import sys

from celery import Celery
from celery.signals import before_task_publish

broker, protocol, queue, task, traceparent, args = sys.argv[1:7]
kwargs = json.loads(sys.argv[7]) if len(sys.argv) > 7 else {}
app = Celery("traced", broker=broker)
app.conf.task_protocol = int(protocol)
app.conf.broker_connection_retry_on_startup = True


@before_task_publish.connect
def inject(headers=None, **_kwargs):
    headers["traceparent"] = traceparent
    headers["tracestate"] = "smarter=interop"
    headers["baggage"] = "tenant=acme"


result = app.send_task(task, args=json.loads(args), kwargs=kwargs, queue=queue)
print(result.id)
