/**
 * The HTTP endpoint's surface: it binds the configured address only, answers GET and HEAD on its three
 * paths and nothing else (404 elsewhere, 405 with Allow for other methods), and /metrics carries no task
 * arguments, whatever the tasks were given.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { REDIS_URL, publishRaw } from '../support/amqp.js';
import { type Harness, startWorker } from '../support/harness.js';
import { ResultReader } from '../support/results.js';

async function freePort(host: string): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, host, () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** A raw request (fetch refuses some methods and bodies on HEAD): status, headers and body. */
function request(
  host: string,
  port: number,
  method: string,
  path: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, method, path }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(method === 'POST' || method === 'PUT' ? 'x=1' : undefined);
  });
}

// 127.0.0.2 is loopback on Linux but another address than 127.0.0.1: a bind to it is not reachable on .1.
const HOST = '127.0.0.2';
let h: Harness;
let port: number;
const results = new ResultReader();
beforeAll(async () => {
  port = await freePort(HOST);
  h = await startWorker({
    env: { CELERY_RESULT_BACKEND: REDIS_URL, SMARTER_WORKER_HTTP_PORT: String(port), SMARTER_WORKER_HTTP_HOST: HOST },
  });
});
afterAll(async () => {
  await h.stop();
  await results.close();
});

test('own wiring: SMARTER_WORKER_HTTP_HOST=127.0.0.2 binds that address only: 127.0.0.1 on the same port is refused', async () => {
  expect((await request(HOST, port, 'GET', '/healthz')).status).toBe(200);
  await expect(request('127.0.0.1', port, 'GET', '/healthz')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
});

test.each(['/healthz', '/readyz', '/metrics'])(
  'own wiring: GET %s answers 200, and HEAD the same status with no body',
  async (path) => {
    const get = await request(HOST, port, 'GET', path);
    expect(get.status).toBe(200);
    expect(get.body.length).toBeGreaterThan(0);
    const head = await request(HOST, port, 'HEAD', path);
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  },
);

test.each(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])(
  'own wiring: %s on each of the three paths is 405 with Allow: GET, HEAD',
  async (method) => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const r = await request(HOST, port, method, path);
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
    }
  },
);

test.each(['/', '/metrics/', '/admin', '/healthz/../metrics', '/%2e%2e/etc/passwd'])(
  'own wiring: GET %s (no such path) is 404, and so is POST',
  async (path) => {
    expect((await request(HOST, port, 'GET', path)).status).toBe(404);
    expect((await request(HOST, port, 'POST', path)).status).toBe(404);
  },
);

test('own wiring: /metrics exposes no task arguments: succeeded, failed and dead-lettered tasks with a marker in their arguments, and unregistered task names, leave no trace of it', async () => {
  const marker = `marker${randomUUID().replace(/-/g, '')}`;
  const ok = await h.worker.publisher.apply('test.echo', [marker], { secret: marker });
  const failed = await h.worker.publisher.apply('test.fail', [marker], {});
  await results.ready(ok);
  await results.ready(failed);
  // A poison message (wrong type in a header) whose body and headers carry the marker.
  const id = randomUUID();
  await publishRaw(h.queue, JSON.stringify([[marker], { marker }, {}]), {
    contentType: 'application/json',
    correlationId: id,
    headers: { task: 'test.echo', id, retries: marker, argsrepr: marker },
  });
  // And 20 messages of task names nobody registered: a name is whatever a publisher chose, so a label of
  // its own each would let anyone grow the worker's memory and /metrics without bound.
  for (let i = 0; i < 20; i++) await h.worker.publisher.apply(`nobody.${marker}.${i}`, [], {}, { queue: h.queue });
  const text = await (async () => {
    for (;;) {
      const t = (await request(HOST, port, 'GET', '/metrics')).body;
      if (/smarter_worker_poison_messages_total\{queue="[^"]+"\} 21/.test(t)) return t;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  expect(text).toMatch(/smarter_worker_tasks_total\{task="test.echo",outcome="success"\} 1/);
  expect(text).toMatch(/smarter_worker_tasks_total\{task="test.fail",outcome="failure"\} 1/);
  expect(text).toMatch(/smarter_worker_tasks_total\{task="\(not registered\)",outcome="failure"\} 20/);
  expect(text).not.toContain(marker);
});

test("own wiring: smarter-beat's endpoint is read-only too: GET on /healthz and /metrics, 405 with Allow for POST and DELETE, 404 elsewhere", async () => {
  const beatPort = await freePort('127.0.0.1');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beat-http-'));
  const beat = spawn(process.execPath, ['--import', 'tsx', 'beat/main.ts', '--http-port', String(beatPort)], {
    env: {
      ...process.env,
      CELERY_RESULT_BACKEND: REDIS_URL,
      SMARTER_BEAT_LOCK: `beat-http-${randomUUID()}`,
      SMARTER_BEAT_SCHEDULE_FILE: `${dir}/schedule.json`,
    },
    stdio: 'ignore',
  });
  try {
    let health = 0;
    for (let i = 0; i < 150 && health !== 200; i++) {
      health = await request('127.0.0.1', beatPort, 'GET', '/healthz').then(
        (r) => r.status,
        () => 0,
      );
      if (health !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(health).toBe(200);
    expect((await request('127.0.0.1', beatPort, 'GET', '/metrics')).body).toContain('smarter_beat_');
    for (const method of ['POST', 'DELETE']) {
      const r = await request('127.0.0.1', beatPort, method, '/healthz');
      expect([r.status, r.headers.allow]).toEqual([405, 'GET, HEAD']);
    }
    expect((await request('127.0.0.1', beatPort, 'GET', '/admin')).status).toBe(404);
  } finally {
    beat.kill('SIGTERM');
    await new Promise((r) => beat.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
