/** celery-node's client (a peer implementation) can send us a task and read the result from Redis. */
import celery from 'celery-node';
import { AMQP_URL, REDIS_URL } from '../support/amqp.js';
import { startWorker } from '../support/harness.js';

test("own wiring: celery-node's client sends test.add to our worker and gets 3 back", async () => {
  const h = await startWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL } });
  const client = celery.createClient(AMQP_URL, REDIS_URL, h.queue);
  try {
    const result = client.createTask('test.add').applyAsync([1, 2]);
    expect(await result.get(15_000)).toBe(3);
  } finally {
    await client.disconnect();
    await h.stop();
  }
});
