/**
 * On a Redis broker, what our worker publishes is run by a real Python Celery worker: our worker runs a
 * task that retries (the retry waits in the delayed set), stops; a Python worker on the same queue runs the
 * retry with the same id, retries = 1 and the custom header intact.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { REDIS_URL } from '../support/redis.js';
import { startRedisWorker } from '../support/redis-harness.js';
import { terminate } from '../support/child.js';
import { HANDOFF_BODY, handedOver, handoffHeaders } from '../support/handoff.js';
import { ResultReader } from '../support/results.js';
import { spawnPythonWorker } from '../support/python-worker.js';

test('own wiring: a Python Celery worker on Redis runs a retry our worker published', async () => {
  const results = new ResultReader();
  const h = await startRedisWorker();
  let py: ChildProcess | undefined;
  try {
    const id = randomUUID();
    await h.broker.send(h.queue, {
      body: Buffer.from(HANDOFF_BODY),
      properties: {
        contentType: 'application/json',
        contentEncoding: 'utf-8',
        correlationId: id,
        deliveryMode: 2,
        priority: 0,
        headers: handoffHeaders(id),
      },
    });
    for (let i = 0; i < 100 && !(await results.meta(id)); i++) await new Promise((r) => setTimeout(r, 50));
    expect((await results.meta(id))?.status).toBe('RETRY');
    await h.app.shutdown();
    py = spawnPythonWorker({
      app: 'pyworker',
      queue: h.queue,
      env: { CELERY_BROKER_URL: REDIS_URL, CELERY_RESULT_BACKEND: REDIS_URL, ...h.pythonEnv },
    });
    const meta = await results.ready(id, 30_000);
    expect(meta.status).toBe('SUCCESS');
    expect(meta.result).toEqual(handedOver(id));
  } finally {
    await terminate(py);
    await h.scope.close();
    await results.close();
  }
}, 60_000);
