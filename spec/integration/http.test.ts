/** The health and metrics endpoint of a real worker: probes and Prometheus text. */
import { closeConnectionNamed } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type Harness, httpWorkerForFile } from '../support/harness.js';
import type { ResultReader } from '../support/results.js';

let h: Harness;
let base: string;
let results: ResultReader;
httpWorkerForFile({}, (w) => ({ h, base, results } = w));

test('own wiring: /healthz and /readyz answer 200 while the worker consumes', async () => {
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  const ready = await fetch(`${base}/readyz`);
  expect(ready.status).toBe(200);
});

test('own wiring: /metrics counts tasks by name and outcome, and shows in-flight, prefetch, delay levels and stuck publish channels renewed', async () => {
  await results.ready(await h.worker.publisher.apply('test.add', [1, 2], {}));
  await results.ready(await h.worker.publisher.apply('test.fail', ['x'], {}));
  // The broker's counts are read beside the scrape: a scrape may answer before the first read is in.
  const text = await waitFor(async () => {
    const t = await (await fetch(`${base}/metrics`)).text();
    return /smarter_worker_delayed_messages\{level="0"\} \d+/.test(t) ? t : undefined;
  });
  expect(text).toMatch(/smarter_worker_broker_blocked 0/);
  expect(text).toMatch(/smarter_worker_tasks_total\{task="test.add",outcome="success"\} 1/);
  expect(text).toMatch(/smarter_worker_tasks_total\{task="test.fail",outcome="failure"\} 1/);
  expect(text).toMatch(/smarter_worker_in_flight 0/);
  expect(text).toMatch(/smarter_worker_prefetch 16/);
  expect(text).toMatch(/smarter_worker_delayed_messages\{level="0"\} \d+/);
  expect(text).toMatch(/smarter_worker_task_runtime_seconds_count\{task="test.add"\} 1/);
  expect(text).toMatch(/smarter_worker_publish_renewals\{by="channel"\} 0/);
  expect(text).toMatch(/smarter_worker_publish_renewals\{by="connection"\} 0/);
});

test('own wiring: /readyz says 503 while the broker connection is down, and 200 again after the reconnect', async () => {
  // Only this worker's connection: the broker is shared.
  await closeConnectionNamed(h.worker.options.nodeName, 'readiness test');
  await waitFor(async () => (await fetch(`${base}/readyz`)).status === 503, 5000, 20);
  await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, 20_000, 100);
  expect((await fetch(`${base}/readyz`)).status).toBe(200);
});
