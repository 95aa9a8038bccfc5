"""The Celery app the clients of Smarter's tasks call through, configured as Smarter's callers are: the app named
"smarter", protocol 1 (smarter/smarter/lib/celery_conf/__init__.py), retrying the broker at startup as the tests
may start before it answers."""
from celery import Celery


def smarter_app(broker, backend=None):
    app = Celery("smarter", broker=broker, backend=backend)
    app.conf.task_protocol = 1
    app.conf.broker_connection_retry_on_startup = True
    return app
