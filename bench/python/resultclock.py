"""Publish -> result on one clock: the producer's. Both workers PUBLISH each result on its key's channel (as
Celery's redis backend does), so a listener in the producer stamps its arrival with time.monotonic(), the clock
the producer stamps each send with. date_done would compare the producer's clock with the worker's, written
to the millisecond only by ours: a sub-millisecond latency could come out negative.

time.monotonic() is CLOCK_MONOTONIC, one clock for every process of the machine: a task's own start stamp taken
with it (Python) or with process.hrtime (Node, the same clock) is comparable with the send stamp too."""
import threading
import time

import redis

PATTERN = "celery-task-meta-*"


class ResultClock:
    """Stamps every result PUBLISHed while it listens: `arrived[task_id] = (monotonic seconds, payload)`."""

    def __init__(self, url):
        self.arrived = {}
        self._lock = threading.Lock()
        self._client = redis.Redis.from_url(url)
        self._pubsub = self._client.pubsub()
        self._pubsub.psubscribe(**{PATTERN: self._on_message})
        # The subscription's confirmation, read before any send, so no result of the first sends is missed.
        confirmed = self._pubsub.get_message(timeout=10)
        if not confirmed or confirmed["type"] != "psubscribe":
            raise RuntimeError(f"no subscription to results: {confirmed}")
        self._thread = self._pubsub.run_in_thread(sleep_time=0.001, daemon=True)

    def _on_message(self, message):
        t = time.monotonic()
        task_id = message["channel"].decode()[len(PATTERN) - 1:]
        with self._lock:
            self.arrived.setdefault(task_id, (t, message["data"]))

    def wait(self, ids, timeout=60):
        """The arrivals of `ids` ({id: (t, payload)}), after waiting up to `timeout` s for the missing ones."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if all(i in self.arrived for i in ids):
                    break
            time.sleep(0.05)
        with self._lock:
            return {i: self.arrived[i] for i in ids if i in self.arrived}

    def close(self):
        # The listening thread closes its pubsub connection as it ends.
        self._thread.stop()
        self._thread.join(5)
        self._client.close()
