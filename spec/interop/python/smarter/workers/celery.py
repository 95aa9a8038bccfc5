"""A stand-in for Smarter's Celery app (smarter/workers/celery.py), so that the migration guide's
`celery -A smarter.workers.celery.app …` commands run as written: the same app name, its broker and result
backend from the environment, and one task that only Python serves."""
import os

from celery import Celery

app = Celery("smarter", broker=os.environ["CELERY_BROKER_URL"], backend=os.environ.get("CELERY_RESULT_BACKEND") or None)


@app.task(name="smarter.apps.legacy.tasks.python_only")
def python_only(n):
    return n * 2
