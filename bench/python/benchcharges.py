"""Python side of the charges benchmark.

As a Celery app (worker): Smarter's create_charge under its registered name, on the operational queue, writing
account_charge as Smarter's does (Decimal(str(total_cost)), UTC timestamps), plus the budget lookup that the
Charge model's save signal makes. One persistent connection per worker process: the best case for Python
(Django with CONN_MAX_AGE=0 would reconnect for every task).

As a script: `benchcharges.py publish <queue> <count>` sends count charges as Smarter's callers do (protocol 1);
`benchcharges.py paced <queue> <rate> <seconds>` sends at a fixed rate, each charge's resource_locator carrying
its publish time in microseconds, so the row's created_at gives publish → commit latency.
"""
import os
import sys
import time
from decimal import Decimal

import pymysql
from celery import Celery
from celery.signals import worker_process_init

app = Celery("benchcharges", broker=os.environ.get("CELERY_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//"))
app.conf.task_protocol = 1
app.conf.task_ignore_result = True
app.conf.broker_connection_retry_on_startup = True
_db = {}


@worker_process_init.connect
def _connect(**_):
    _db["conn"] = pymysql.connect(host=os.environ.get("SMARTER_MYSQL_HOST", "127.0.0.1"),
                                  port=int(os.environ.get("SMARTER_MYSQL_PORT", "3306")),
                                  user=os.environ.get("SMARTER_MYSQL_USER", "root"),
                                  password=os.environ.get("SMARTER_MYSQL_PASSWORD", ""),
                                  database=os.environ["SMARTER_MYSQL_DATABASE"], autocommit=True)


@app.task(name="smarter.apps.account.tasks.create_charge", autoretry_for=(Exception,), retry_backoff=True, max_retries=3)
def create_charge(*args, **kwargs):
    total_cost = kwargs.get("total_cost")
    with _db["conn"].cursor() as cur:
        cur.execute(
            "INSERT INTO account_charge (resource_locator, charge_type, prompt_tokens, completion_tokens, total_tokens,"
            " total_cost, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
            (kwargs.get("resource_locator"), kwargs.get("charge_type"), kwargs.get("prompt_tokens"),
             kwargs.get("completion_tokens"), kwargs.get("total_tokens"), Decimal(str(total_cost))))
        cur.execute("SELECT 1 FROM account_resourceconstraint WHERE resource_locator = %s AND is_active = 1 LIMIT 1",
                    (kwargs.get("resource_locator"),))


def charge(locator):
    return dict(resource_locator=locator, charge_type="completion", prompt_tokens=455, completion_tokens=154,
                total_tokens=609, total_cost=Decimal("0.00123456"))


if __name__ == "__main__":
    mode, queue = sys.argv[1], sys.argv[2]
    # A connection of its own, closed with the protocol's handshake: a pooled one left to the process's exit is
    # reset, and publishes the broker has not read yet are lost.
    with app.connection_for_write() as conn:
        producer = conn.Producer()
        if mode == "publish":
            for i in range(int(sys.argv[3])):
                app.send_task("smarter.apps.account.tasks.create_charge", kwargs=charge(f"userprofile-{i % 50}"),
                              queue=queue, producer=producer)
        else:
            rate, seconds = float(sys.argv[3]), float(sys.argv[4])
            start = time.time()
            for i in range(int(rate * seconds)):
                due = start + i / rate
                pause = due - time.time()
                if pause > 0:
                    time.sleep(pause)
                app.send_task("smarter.apps.account.tasks.create_charge",
                              kwargs=charge(f"lat-{int(time.time() * 1e6)}"), queue=queue, producer=producer)
