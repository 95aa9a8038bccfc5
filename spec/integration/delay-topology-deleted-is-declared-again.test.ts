/**
 * An operator deletes the delay levels (the management UI's "delete", a policy, a cleanup script) while the
 * worker runs: a reschedule published into a level that no longer exists used to be confirmed by RabbitMQ and
 * dropped (no queue took it), so the check was gone without a word. Publishes are mandatory now: the broker
 * returns the message, the worker declares the topology again and sends it once more. On a RabbitMQ node of
 * the test's own, since deleting the shared delay levels would drop other tests' waiting messages.
 */
import { randomUUID } from 'node:crypto';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { waitFor } from '../support/wait.js';
import { startWorker } from '../support/harness.js';
import { type RabbitNode, startRabbitNode } from '../support/rabbit-node.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';

let node: RabbitNode;
beforeAll(async () => {
  node = await startRabbitNode();
}, 120_000);
afterAll(async () => {
  await node.remove();
  await closeRunCounter();
});

test('own wiring: the delay levels deleted under a running worker: 50 checks rescheduling every 3 s still make all 5 attempts (250 runs), none lost', async () => {
  const key = `delay-deleted:${randomUUID()}`;
  const h = await startWorker({ env: { CELERY_BROKER_URL: node.url } });
  try {
    // Every level a 3-second wait passes through (3 = 2 + 1: levels 1 and 0).
    await node.ctl('delete_queue', 'celery_delayed_1');
    await node.ctl('delete_queue', 'celery_delayed_0');
    const conn = await amqp.connect(node.url);
    const ch = await conn.createConfirmChannel();
    for (let i = 0; i < 50; i++) {
      const id = randomUUID();
      ch.sendToQueue(h.queue, Buffer.from(JSON.stringify([[], { key, every: 3 }, {}])), {
        contentType: 'application/json',
        contentEncoding: 'utf-8',
        correlationId: id,
        headers: { lang: 'py', task: 'test.poll', id, root_id: id, retries: 0 },
      });
    }
    await ch.waitForConfirms();
    await conn.close();
    const counts = async () => ({
      runs: Number(await runCounter().get(`${key}:runs`)),
      gaveUp: Number(await runCounter().get(`${key}:gave-up`)),
    });
    await waitFor(async () => (await counts()).gaveUp === 50, 60_000, 200).catch(async (e: unknown) => {
      throw new Error(`${String(e)}: ${JSON.stringify(await counts())}`);
    });
    expect(await counts()).toEqual({ runs: 250, gaveUp: 50 });
    expect(await node.ctl('list_queues', '-q', 'name')).toContain('celery_delayed_1');
  } finally {
    await h.stop();
    await runCounter().del(`${key}:runs`, `${key}:gave-up`, key);
  }
}, 120_000);

test('own wiring: a queue the worker sends to, deleted after its first message: the next message declares it again and lands (1 of 1), instead of vanishing', async () => {
  const h = await startWorker({ env: { CELERY_BROKER_URL: node.url } });
  const other = `${h.queue}-other`;
  try {
    await h.worker.publisher.apply('test.add', [1, 1], {}, { queue: other });
    await node.ctl('delete_queue', other);
    await h.worker.publisher.apply('test.add', [2, 2], {}, { queue: other });
    const line = (await node.ctl('list_queues', '-q', 'name', 'messages'))
      .split('\n')
      .find((l) => l.startsWith(`${other}\t`));
    expect(line?.split('\t')[1]).toBe('1');
  } finally {
    await h.stop();
    await node.ctl('delete_queue', other).catch(() => undefined);
  }
}, 60_000);

test('own wiring: the dead-letter queue deleted after its first copy: the next poison message is still copied there (1 of 1) before it is settled', async () => {
  const h = await startWorker({ env: { CELERY_BROKER_URL: node.url } });
  const dlq = `${h.queue}.dead_letter`;
  const count = async () =>
    (await node.ctl('list_queues', '-q', 'name', 'messages'))
      .split('\n')
      .find((l) => l.startsWith(`${dlq}\t`))
      ?.split('\t')[1];
  const conn = await amqp.connect(node.url);
  try {
    const ch = await conn.createConfirmChannel();
    const poison = (n: number) =>
      ch.sendToQueue(h.queue, Buffer.from(`not json ${n}`), {
        contentType: 'application/json',
        headers: { task: 'test.add', id: randomUUID() },
      });
    poison(1);
    await ch.waitForConfirms();
    await waitFor(async () => (await count()) === '1', 15_000, 200);
    await node.ctl('delete_queue', dlq);
    poison(2);
    await ch.waitForConfirms();
    await waitFor(async () => (await count()) === '1', 15_000, 200);
    expect(await count()).toBe('1');
  } finally {
    await conn.close();
    await h.stop();
    await node.ctl('delete_queue', dlq).catch(() => undefined);
  }
}, 60_000);
