/**
 * Against the real RabbitMQ and the real `celery inspect`: a queue deleted while the
 * worker consumes it (the broker cancels the consumer) is declared and consumed again with backoff; until
 * then /readyz answers 503 and `active_queues` does not list it. Another connection holds the queue name
 * (an exclusive queue) for a while, so the worker's first attempts fail and the waiting state is seen.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { AMQP_URL } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type Harness, httpWorkerForFile } from '../support/harness.js';
import type { ResultReader } from '../support/results.js';
import { PYTHON } from '../support/python-worker.js';

const exec = promisify(execFile);

async function activeQueues(node: string): Promise<string[]> {
  const { stdout } = await exec(
    PYTHON,
    ['-m', 'celery', '-b', AMQP_URL, 'inspect', 'active_queues', '-d', node, '-j'],
    { timeout: 60_000 },
  );
  const out = JSON.parse(stdout) as Record<string, Array<{ name: string }>>;
  return (out[node] ?? []).map((q) => q.name);
}

let h: Harness;
let base: string;
let results: ResultReader;
httpWorkerForFile({}, (w) => ({ h, base, results } = w));

test('own wiring: a queue deleted while consumed: 503 and not in active_queues until consumed again, then tasks run', async () => {
  const node = h.worker.options.nodeName;
  expect((await fetch(`${base}/readyz`)).status).toBe(200);
  expect(await activeQueues(node)).toContain(h.queue);

  const squatter = await amqp.connect(AMQP_URL);
  try {
    const ch = await squatter.createChannel();
    await ch.deleteQueue(h.queue);
    // Held under the same name by another connection: the worker's declarations fail (RESOURCE_LOCKED).
    await ch.assertQueue(h.queue, { exclusive: true });
    const readyz = await waitFor(
      async () => {
        const r = await fetch(`${base}/readyz`);
        return r.status === 503 ? r.text() : undefined;
      },
      5000,
      20,
    );
    expect(readyz).toContain(`not consuming ${h.queue}`);
    expect(h.worker.activeQueues()).not.toContain(h.queue);
    expect(await activeQueues(node)).not.toContain(h.queue);
    expect(h.broker.connected).toBe(true);
  } finally {
    await squatter.close();
  }

  await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, 30_000, 100);
  expect(await activeQueues(node)).toContain(h.queue);
  const id = await h.worker.publisher.apply('test.add', [2, 3], {});
  expect(await results.ready(id)).toMatchObject({ status: 'SUCCESS', result: 5 });
}, 90_000);
