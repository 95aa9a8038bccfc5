"""The Celery app through which the clients here call Smarter's tasks: named "smarter" and on protocol 1, as
Smarter's own callers are (smarter/smarter/lib/celery_conf/__init__.py sets task_protocol = 1), with the
broker_connection_retry_on_startup that every Python client of these tests sets."""
from celery import Celery


def smarter_app(broker, backend=None):
    app = Celery("smarter", broker=broker, backend=backend)
    app.conf.task_protocol = 1
    app.conf.broker_connection_retry_on_startup = True
    return app
