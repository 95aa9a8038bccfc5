/**
 * TLS to the broker and the result backend, with a CA and certificates this test makes (openssl), against
 * RabbitMQ nodes of its own with TLS listeners (one that asks no client certificate, one that requires it)
 * and a redis-server of its own with a TLS port. Verification is on unless `cert_reqs` says CERT_NONE.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { AmqpBroker } from '../../lib/broker/amqp/amqp-broker.js';
import { connectTo } from '../../lib/broker/amqp/amqp-connect.js';
import { RedisBackend } from '../../lib/backend/redis-backend.js';
import { withBroker } from '../../lib/broker/one-shot.js';
import { encodeTaskMessage } from '../../lib/protocol/index.js';
import { parseTlsSetting, tlsConnectOptions } from '../../lib/config/tls.js';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { waitFor } from '../support/wait.js';
import { startWorker } from '../support/harness.js';
import { recordingLogger } from '../support/logs.js';
import { type RabbitNode, freePort, startRabbitNode } from '../support/rabbit-node.js';
import { type RedisNode, startRedisNode } from '../support/redis-node.js';
import { type TestCa, makeTestCa } from '../support/tls.js';

let ca: TestCa;
let otherCa: TestCa;
let server: { certFile: string; keyFile: string };
let client: { certFile: string; keyFile: string };
let strangerClient: { certFile: string; keyFile: string };
let tlsNode: RabbitNode | undefined;
let mtlsNode: RabbitNode | undefined;
let tlsPort = 0;
let mtlsPort = 0;
let redisTls: RedisNode | undefined;
let redisTlsPort = 0;

function sslConfig(port: number, requireClientCert: boolean): string {
  return [
    `listeners.ssl.default = 127.0.0.1:${port}`,
    `ssl_options.cacertfile = ${ca.caFile}`,
    `ssl_options.certfile = ${server.certFile}`,
    `ssl_options.keyfile = ${server.keyFile}`,
    `ssl_options.verify = ${requireClientCert ? 'verify_peer' : 'verify_none'}`,
    `ssl_options.fail_if_no_peer_cert = ${requireClientCert}`,
  ].join('\n');
}

const amqps = (port: number) => `amqps://guest:guest@127.0.0.1:${port}/`;
const endpoint = (tls: string) => ({
  heartbeatSeconds: 10,
  connectionName: 'tls test',
  tls: parseTlsSetting(tls),
  connectTimeoutMs: 10_000,
});

async function startRedisTls(): Promise<RedisNode> {
  return startRedisNode({
    listen: (port) => [
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--tls-cert-file',
      server.certFile,
      '--tls-key-file',
      server.keyFile,
      '--tls-ca-cert-file',
      ca.caFile,
      '--tls-auth-clients',
      'no',
    ],
    probe: { host: '127.0.0.1', tls: tlsConnectOptions(parseTlsSetting(JSON.stringify({ ca_certs: ca.caFile }))) },
  });
}

beforeAll(async () => {
  [ca, otherCa] = await Promise.all([makeTestCa('amqp'), makeTestCa('stranger')]);
  server = await ca.issue('server', { altNames: ['IP:127.0.0.1', 'DNS:localhost'] });
  client = await ca.issue('client', { client: true });
  strangerClient = await otherCa.issue('stranger-client', { client: true });
  [tlsPort, mtlsPort] = await Promise.all([freePort(), freePort()]);
  const started = await Promise.allSettled([
    startRabbitNode({ config: sslConfig(tlsPort, false) }),
    startRabbitNode({ config: sslConfig(mtlsPort, true) }),
    startRedisTls(),
  ]);
  if (started[0].status === 'fulfilled') tlsNode = started[0].value;
  if (started[1].status === 'fulfilled') mtlsNode = started[1].value;
  if (started[2].status === 'fulfilled') redisTls = started[2].value;
  redisTlsPort = redisTls?.port ?? 0;
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}, 180_000);

afterAll(async () => {
  await Promise.all([tlsNode?.remove(), mtlsNode?.remove(), redisTls?.remove()]);
  ca?.remove();
  otherCa?.remove();
}, 120_000);

test('own wiring: a task over amqps:// (server verified against the test CA) stores its result over rediss:// (verified too)', async () => {
  const backendUrl = `rediss://127.0.0.1:${redisTlsPort}/0?ssl_cert_reqs=required&ssl_ca_certs=${encodeURIComponent(ca.caFile)}`;
  const h = await startWorker({
    env: {
      CELERY_BROKER_URL: amqps(tlsPort),
      CELERY_BROKER_USE_SSL: JSON.stringify({ ca_certs: ca.caFile }),
      CELERY_RESULT_BACKEND: backendUrl,
    },
  });
  const redis = new Redis({
    port: redisTlsPort,
    host: '127.0.0.1',
    tls: tlsConnectOptions(parseTlsSetting(JSON.stringify({ ca_certs: ca.caFile }))),
  });
  try {
    const conn = await connectTo(amqps(tlsPort), endpoint(JSON.stringify({ ca_certs: ca.caFile })));
    const ch = await conn.createConfirmChannel();
    const id = randomUUID();
    ch.sendToQueue(h.queue, Buffer.from(JSON.stringify([[], { x: 20, y: 22 }, {}])), {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      correlationId: id,
      headers: { lang: 'py', task: 'test.add', id, root_id: id },
    });
    await ch.waitForConfirms();
    await conn.close();
    const stored = await waitFor(async () => (await redis.get(`celery-task-meta-${id}`)) ?? undefined, 20_000);
    expect(JSON.parse(stored)).toMatchObject({ status: 'SUCCESS', result: 42 });
  } finally {
    redis.disconnect();
    await h.app.shutdown();
  }
}, 60_000);

test('own wiring: an amqps:// server whose CA is not given is refused, with an error that says what to set', async () => {
  await expect(connectTo(amqps(tlsPort), endpoint('true'))).rejects.toThrow(
    /cannot connect to amqps:\/\/guest:\*\*\*@127\.0\.0\.1:\d+\/: TLS: the server's certificate is not trusted \(\w+: .*\); give the CA that signed it as ca_certs in CELERY_BROKER_USE_SSL/,
  );
  // Another CA is no better than none.
  await expect(connectTo(amqps(tlsPort), endpoint(JSON.stringify({ ca_certs: otherCa.caFile })))).rejects.toThrow(
    /not trusted/,
  );
  // The worker's broker keeps retrying (the operator may fix the server) and logs the same sentence.
  const log = recordingLogger();
  const broker = new AmqpBroker({
    url: amqps(tlsPort),
    logger: log,
    reconnectInitialMs: 50,
    tls: parseTlsSetting('true'),
  });
  const connecting = broker.connect().catch(() => undefined);
  try {
    await waitFor(() => log.lines.find((l) => l.level === 'warn' && /not trusted/.test(String(l.meta.error))), 20_000);
    expect(broker.connected).toBe(false);
  } finally {
    await broker.close();
    await connecting;
  }
}, 60_000);

test("own wiring: the commands' one-shot connection (dead-letter list/replay, delayed) takes the same TLS settings", async () => {
  const stats = await withBroker(
    amqps(tlsPort),
    (b) => b.delayedStats(),
    15_000,
    undefined,
    parseTlsSetting(JSON.stringify({ ca_certs: ca.caFile })),
  );
  expect(stats.length).toBeGreaterThan(0);
  await expect(withBroker(amqps(tlsPort), (b) => b.delayedStats(), 3_000)).rejects.toThrow(
    /could not connect to the broker at amqps:/,
  );
}, 30_000);

test('own wiring: a one-shot command over rediss:// with an untrusted certificate gives up within its timeout and says why (it used to hang)', async () => {
  const url = `rediss://127.0.0.1:${redisTlsPort}/0`;
  const stats = await withBroker(
    url,
    (b) => b.delayedStats(),
    15_000,
    undefined,
    parseTlsSetting(JSON.stringify({ ca_certs: ca.caFile })),
  );
  expect(stats.length).toBeGreaterThan(0);
  const t0 = Date.now();
  // Before: the timeout fired, then closing waited for ever on a QUIT queued behind a connection never made.
  await expect(withBroker(url, (b) => b.delayedStats(), 3_000)).rejects.toThrow(
    /within 3 s: self-signed certificate in certificate chain/,
  );
  expect(Date.now() - t0).toBeLessThan(10_000);
}, 30_000);

test('own wiring: a certificate for another host name is refused, though signed by the trusted CA', async () => {
  await expect(
    connectTo(amqps(tlsPort), endpoint(JSON.stringify({ ca_certs: ca.caFile, server_hostname: 'broker.example.org' }))),
  ).rejects.toThrow(/not trusted \(ERR_TLS_CERT_ALTNAME_INVALID/);
});

test('own wiring: verification is skipped only when asked: cert_reqs CERT_NONE connects without the CA', async () => {
  const conn = await connectTo(amqps(tlsPort), endpoint('{"cert_reqs": "CERT_NONE"}'));
  expect(conn).toBeDefined();
  await conn.close();
});

test('own wiring: a node that requires client certificates refuses a client without one, or with one from another CA, and takes ours', async () => {
  const wants =
    /cannot connect to amqps:.*: TLS: the server refused this client's certificate or wants one \(.+\); set certfile and keyfile in CELERY_BROKER_USE_SSL/;
  await expect(connectTo(amqps(mtlsPort), endpoint(JSON.stringify({ ca_certs: ca.caFile })))).rejects.toThrow(wants);
  await expect(
    connectTo(
      amqps(mtlsPort),
      endpoint(
        JSON.stringify({ ca_certs: ca.caFile, certfile: strangerClient.certFile, keyfile: strangerClient.keyFile }),
      ),
    ),
  ).rejects.toThrow(wants);
  const conn = await connectTo(
    amqps(mtlsPort),
    endpoint(JSON.stringify({ ca_certs: ca.caFile, certfile: client.certFile, keyfile: client.keyFile })),
  );
  // The broker saw our certificate: its connection list says the peer's subject.
  const listed = await mtlsNode?.ctl('list_connections', 'peer_cert_subject', '-q');
  expect(listed).toContain('CN=client');
  await conn.close();
});

test('own wiring: rediss:// without the CA refuses the server: the store fails and says why; with ssl_cert_reqs=CERT_NONE it stores', async () => {
  const refused = new RedisBackend(`rediss://127.0.0.1:${redisTlsPort}/0`, 60);
  try {
    await expect(
      refused.store({ taskId: randomUUID(), state: 'SUCCESS', result: 1, traceback: null, children: null }),
    ).rejects.toThrow(/not trusted .*CELERY_REDIS_BACKEND_USE_SSL/);
  } finally {
    await refused.close();
  }
  const lax = new RedisBackend(`rediss://127.0.0.1:${redisTlsPort}/0?ssl_cert_reqs=CERT_NONE`, 60);
  const id = randomUUID();
  try {
    await lax.store({ taskId: id, state: 'SUCCESS', result: 7, traceback: null, children: null });
    expect(await lax.get(id)).toMatchObject({ status: 'SUCCESS', result: 7 });
  } finally {
    await lax.close();
  }
}, 60_000);

test('own wiring: the Redis broker over rediss://, verified against the CA from CELERY_BROKER_USE_SSL, sends a task message', async () => {
  const url = `rediss://127.0.0.1:${redisTlsPort}/2`;
  const queue = `tlsq_${randomUUID().slice(0, 8)}`;
  const stats = await withBroker(
    url,
    async (b) => {
      await b.declareQueue({ name: queue });
      await b.send(queue, encodeTaskMessage({ id: randomUUID(), task: 'test.add', args: [1, 2], kwargs: {} }));
      return b.inspectQueue(queue);
    },
    15_000,
    undefined,
    parseTlsSetting(JSON.stringify({ ssl_ca_certs: ca.caFile })),
  );
  expect(stats?.messageCount).toBe(1);
}, 30_000);

test('own wiring: a plain amqp:// connection to the TLS listener fails instead of sending credentials in clear', async () => {
  // Sanity check of the setup: the TLS port speaks only TLS.
  await expect(amqp.connect(`amqp://guest:guest@127.0.0.1:${tlsPort}/`, { timeout: 5000 })).rejects.toThrow();
});
