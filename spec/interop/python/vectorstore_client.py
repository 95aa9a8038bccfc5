"""Debian's Python Celery calling Smarter's vectorstore tasks as Smarter's callers do: protocol 1, positional
`.delay(document.pk)` on tasks declared with Smarter's names and queues (vectorstore views / broker / Beat).

Usage: vectorstore_client.py <broker> <backend> <op-queue> <infra-queue> <mode> <id>
mode "load": load_vectorstore_document.delay(id).get()
mode "delete": delete_vectorstore_document.delay(id).get()
mode "snapshot": snapshot_vectorstore.delay(id).get()
mode "maintain": maintain_vectorstores.delay().get()
mode "bad": load_vectorstore_document.delay(id as a word), the failure's class and message
Prints one JSON object: {"id": task id, "result": the task's result}.
"""
import json
import sys

from smarter_caller import smarter_app

broker, backend, op_queue, infra_queue, mode, pk = sys.argv[1:7]
app = smarter_app(broker, backend)

V = "smarter.apps.vectorstore.tasks."


@app.task(name=V + "load_vectorstore_document", queue=op_queue)
def load_vectorstore_document(document_id):
    raise RuntimeError("runs on the worker")


@app.task(name=V + "delete_vectorstore_document", queue=op_queue)
def delete_vectorstore_document(document_id):
    raise RuntimeError("runs on the worker")


@app.task(name=V + "snapshot_vectorstore", queue=infra_queue)
def snapshot_vectorstore(vectorstore_id):
    raise RuntimeError("runs on the worker")


@app.task(name=V + "maintain_vectorstores", queue=infra_queue)
def maintain_vectorstores():
    raise RuntimeError("runs on the worker")


calls = {
    "load": lambda: load_vectorstore_document.delay(int(pk)),
    "delete": lambda: delete_vectorstore_document.delay(int(pk)),
    "snapshot": lambda: snapshot_vectorstore.delay(int(pk)),
    "maintain": lambda: maintain_vectorstores.delay(),
}
if mode == "bad":
    r = load_vectorstore_document.delay("seven")
    try:
        r.get(timeout=60)
        print(json.dumps({"id": r.id, "result": "no failure"}))
    except Exception as e:  # pylint: disable=broad-except
        print(json.dumps({"id": r.id, "state": r.state, "type": type(e).__name__, "message": str(e)}))
    sys.exit(0)
if mode not in calls:
    sys.exit("unknown mode " + mode)
r = calls[mode]()
print(json.dumps({"id": r.id, "result": r.get(timeout=60)}))
