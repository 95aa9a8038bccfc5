"""The Python workers a migration leaves in place: they implement tasks our worker does not, on a fallback queue."""
import os

from celery import Celery

app = Celery("fallback", broker=os.environ["CELERY_BROKER_URL"], backend=os.environ["CELERY_RESULT_BACKEND"])


@app.task(name="legacy.verify_domain", bind=True)
def verify_domain(self, domain):
    headers = vars(self.request)
    return {"domain": domain, "worker": "python", "queue": self.request.delivery_info.get("routing_key"),
            "forwarded_by": headers.get("x-smarter-forwarded-by") or (self.request.headers or {}).get("x-smarter-forwarded-by")}


@app.task(name="legacy.double")
def double(n):
    return n * 2
