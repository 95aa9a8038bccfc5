/**
 * A publish channel that RabbitMQ nacks every publish of, while the connection lives, is renewed by the broker
 * (lib/broker/amqp/stuck-publish.ts): past the first bound a new channel, past the second a new connection, each
 * counted and logged; publishing goes on once the node takes messages again. A channel renewal sends nothing
 * again (what waits on the old channel hears its answer); a connection renewal sends again what was unconfirmed. The nacks are made by a queue that
 * refuses publishes when full (`x-overflow: reject-publish`, `x-max-length: 1`) and holds one message.
 */
import { randomUUID } from 'node:crypto';
import { AmqpBroker } from '../../lib/broker/amqp/amqp-broker.js';
import { encodeTaskMessage } from '../../lib/protocol/index.js';
import { AMQP_URL, deleteQueues, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { recordingLogger } from '../support/logs.js';

const bounds = { channelMs: 600, connectionMs: 2000 };
const message = () => encodeTaskMessage({ id: randomUUID(), task: 'tasks.add', args: [1], kwargs: {} });
const queues: string[] = [];

afterAll(async () => {
  await deleteQueues(queues);
});

async function fullQueue(): Promise<string> {
  const q = uniqueName('stuckpub');
  queues.push(q);
  await withChannel(async (ch) => {
    await ch.assertQueue(q, { durable: false, arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' } });
    ch.sendToQueue(q, Buffer.from('filler'));
    await waitFor(async () => (await ch.checkQueue(q)).messageCount === 1, 5000);
  });
  return q;
}

test('every publish nacked: a new channel past the first bound, a new connection past the second, counted and logged; the send succeeds once the queue takes it', async () => {
  const log = recordingLogger();
  const broker = new AmqpBroker({
    url: AMQP_URL,
    logger: log,
    reconnectInitialMs: 100,
    reconnectMaxMs: 500,
    stuckPublish: bounds,
  });
  await broker.connect();
  const q = await fullQueue();
  let nacked = 0;
  let stop = false;
  // A producer that sends again after each nack.
  const sending = (async () => {
    for (;;) {
      try {
        await broker.send(q, message());
        return;
      } catch (err) {
        if (stop) throw err;
        nacked++;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  })();
  try {
    await waitFor(() => broker.publishRenewals.channel >= 1 || undefined, 10_000);
    expect(
      log.lines.some(
        (l) =>
          l.level === 'warn' &&
          /^publish channel stuck: nothing confirmed for more than 600 ms; new publishes go to a new channel/.test(
            l.message,
          ),
      ),
    ).toBe(true);
    await waitFor(() => broker.publishRenewals.connection >= 1 || undefined, 15_000);
    expect(
      log.lines.some(
        (l) =>
          l.level === 'warn' &&
          /^publish channels stuck: nothing confirmed for more than 2000 ms on renewed channels; opening a new connection/.test(
            l.message,
          ),
      ),
    ).toBe(true);
    await waitFor(() => broker.connected || undefined, 10_000);
    expect(nacked).toBeGreaterThan(5);
    // The node takes messages again: the next send is confirmed.
    await withChannel(async (ch) => {
      const m = await ch.get(q, { noAck: true });
      expect(m && m.content.toString()).toBe('filler');
    });
    await sending;
    expect(await withChannel(async (ch) => (await ch.checkQueue(q)).messageCount)).toBe(1);
  } finally {
    stop = true;
    await sending.catch(() => undefined);
    await broker.close();
  }
}, 60_000);

test('a channel whose publishes are confirmed is never renewed, however long the sends go on', async () => {
  const q = uniqueName('stuckpub_ok');
  queues.push(q);
  await withChannel(async (ch) => ch.assertQueue(q, { durable: false }));
  const broker = new AmqpBroker({ url: AMQP_URL, logger: recordingLogger(), stuckPublish: bounds });
  await broker.connect();
  try {
    const until = Date.now() + 2 * bounds.channelMs + 200;
    let sent = 0;
    while (Date.now() < until) {
      await Promise.all(Array.from({ length: 20 }, () => broker.send(q, message())));
      sent += 20;
    }
    expect(broker.publishRenewals).toEqual({ channel: 0, connection: 0 });
    expect(await withChannel(async (ch) => (await ch.checkQueue(q)).messageCount)).toBe(sent);
  } finally {
    await broker.close();
  }
}, 30_000);
