"""
Captures Celery events for a few seconds with kombu's event receiver (what `celery events` and Flower use): says
"listening" once events reach it, then prints them as JSON.
"""
import json
import os
import sys
import threading

from celery import Celery

app = Celery(broker=sys.argv[1])
# A Redis broker under test: the key prefix of its kombu transport.
app.conf.broker_transport_options = json.loads(os.environ.get("BROKER_TRANSPORT_OPTIONS", "{}"))
seconds = float(sys.argv[2])
seen = []


def on_event(event):
    # Said once an event has come through, not once the receiver is made: its queue is bound (AMQP) or its channel
    # subscribed (Redis, at its first poll) only later, and an event sent before is lost. One comes at once: the
    # receiver's wakeup asks every worker for a heartbeat. The seconds are counted from here.
    if not seen:
        print("listening", flush=True)
        timer.start()
    seen.append(event)


with app.connection() as conn:
    recv = app.events.Receiver(conn, handlers={"*": on_event})
    timer = threading.Timer(seconds, lambda: setattr(recv, "should_stop", True))
    try:
        recv.capture(limit=None, timeout=seconds + 2, wakeup=True)
    except Exception:  # noqa: BLE001 - the socket timeout that ends the capture
        pass
print(json.dumps(seen, default=str))
