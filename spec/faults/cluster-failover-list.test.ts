/**
 * The failover list's edges, against the shared RabbitMQ as the one live broker: a first URL that refuses,
 * one that accepts TCP and never answers (a silent listener of the test's own), and Beat's lock on such a list.
 */
import net from 'node:net';
import { AmqpBroker } from '../../lib/broker/amqp/amqp-broker.js';
import { AmqpLock } from '../../lib/broker/amqp/amqp-lock.js';
import { redactUrl } from '../../lib/config/settings.js';
import { nullLogger } from '../../lib/logger.js';
import { AMQP_URL, uniqueName } from '../support/amqp.js';
import { recordingLogger } from '../support/logs.js';
import { freePort } from '../support/rabbit-node.js';

let silent: net.Server;
let silentPort = 0;
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  // Accepts connections and never says a word: what a hung node looks like from outside.
  silent = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  silentPort = (silent.address() as net.AddressInfo).port;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => silent.close(r));
});

test('a first URL that refuses connections: the broker moves to the next one without backing off, and says which it is on', async () => {
  const refused = `amqp://guest:secret1@127.0.0.1:${await freePort()}/`;
  const log = recordingLogger();
  const broker = new AmqpBroker({ url: `${refused};${AMQP_URL}`, logger: log, reconnectInitialMs: 5000 });
  try {
    await broker.connect();
    expect(broker.connectedUrl).toBe(redactUrl(AMQP_URL));
    const failed = log.lines.find((l) => l.message.startsWith('broker connection failed'));
    // Half the list failed, not all of it: no wait before the next URL (the backoff would be ≥ 4 s here).
    expect(failed?.message).toBe(`broker connection failed, retrying with ${redactUrl(AMQP_URL)} in 0 ms`);
    expect(String(failed?.meta.error)).toContain(`cannot connect to amqp://guest:***@127.0.0.1:`);
    expect(JSON.stringify(log.lines)).not.toContain('secret1');
  } finally {
    await broker.close();
  }
});

test('a first URL that accepts TCP and never answers: the connect timeout gives up on it and the next one is used', async () => {
  const log = recordingLogger();
  const broker = new AmqpBroker({
    url: `amqp://guest:guest@127.0.0.1:${silentPort}/;${AMQP_URL}`,
    logger: log,
    connectTimeoutMs: 1000,
  });
  try {
    await broker.connect();
    expect(broker.connectedUrl).toBe(redactUrl(AMQP_URL));
    expect(log.lines.find((l) => l.message.startsWith('broker connection failed'))?.meta.error).toMatch(/ETIMEDOUT/);
  } finally {
    await broker.close();
  }
});

test("Beat's lock is taken through the first URL of the list that answers, and is still one holder at a time", async () => {
  const name = uniqueName('lock');
  const list = `amqp://guest:guest@127.0.0.1:${await freePort()}/;${AMQP_URL}`;
  const a = new AmqpLock(list, name, nullLogger(), 10, { connectTimeoutMs: 2000 });
  const b = new AmqpLock(list, name, nullLogger(), 10, { connectTimeoutMs: 2000 });
  try {
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    await a.release();
    expect(await b.tryAcquire()).toBe(true);
  } finally {
    await a.release();
    await b.release();
  }
});
