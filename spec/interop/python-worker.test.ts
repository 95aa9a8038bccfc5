/**
 * The other direction: what our worker publishes is accepted by a real Python Celery worker (Debian's 5.2).
 * Our worker runs a task that retries; it stops before the retry is due; a Python worker on the same queue
 * runs the retry with the same id, retries = 1 and the custom header intact.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { AMQP_URL, REDIS_URL, deleteQueues, publishRaw } from '../support/amqp.js';
import { startWorker } from '../support/harness.js';
import { terminate } from '../support/child.js';
import { HANDOFF_BODY, handedOver, handoffHeaders } from '../support/handoff.js';
import { ResultReader } from '../support/results.js';
import { waitFor } from '../support/wait.js';
import { spawnPythonWorker } from '../support/python-worker.js';

test('own wiring: a Python Celery worker consumes a retry message our worker published', async () => {
  const results = new ResultReader();
  const h = await startWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL } });
  let py: ChildProcess | undefined;
  try {
    const id = randomUUID();
    await publishRaw(h.queue, HANDOFF_BODY, {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      correlationId: id,
      headers: handoffHeaders(id),
    });
    const retry = await waitFor(() => results.meta(id), 5000, { what: 'a RETRY state stored' });
    expect(retry.status).toBe('RETRY');
    await h.app.shutdown();

    py = spawnPythonWorker({
      app: 'pyworker',
      queue: h.queue,
      env: { CELERY_BROKER_URL: AMQP_URL, CELERY_RESULT_BACKEND: REDIS_URL },
    });
    const meta = await results.ready(id, 30_000);
    expect(meta.status).toBe('SUCCESS');
    expect(meta.result).toEqual(handedOver(id));
  } finally {
    await terminate(py);
    await deleteQueues([h.queue]);
    await results.close();
  }
}, 60_000);
