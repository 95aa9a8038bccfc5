/**
 * Smarter's Helm Redis may run with Sentinel: `sentinel://host:26379` plus kombu's `master_name` transport
 * option. A real sentinel (`redis-server --sentinel`) watches a redis-server of the test's own; Python Celery
 * and our worker both find the master through it, and Python's tasks run on our worker.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { terminate } from '../support/child.js';
import { freePort } from '../support/rabbit-node.js';
import { REDIS_URL, redisScope } from '../support/redis.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { type RedisNode, startRedisNode } from '../support/redis-node.js';
import { PYTHON } from '../support/python-worker.js';

const run = promisify(execFile);
const MASTER = 'mymaster';

let master: RedisNode;
let sentinel: ChildProcess | undefined;
let sentinelPort: number;
let dir: string;
let h: RedisHarness;
beforeAll(async () => {
  master = await startRedisNode();
  sentinelPort = await freePort();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sentinel-'));
  const conf = path.join(dir, 'sentinel.conf');
  fs.writeFileSync(
    conf,
    `port ${sentinelPort}\nbind 127.0.0.1\nsentinel monitor ${MASTER} 127.0.0.1 ${master.port} 1\n`,
  );
  sentinel = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  const probe = new Redis({
    port: sentinelPort,
    lazyConnect: true,
    retryStrategy: () => 100,
    maxRetriesPerRequest: null,
  });
  probe.on('error', () => undefined);
  await probe.connect().catch(() => undefined);
  for (let i = 0; ; i++) {
    const addr = (await probe.call('SENTINEL', 'get-master-addr-by-name', MASTER).catch(() => null)) as string[] | null;
    if (addr?.[1] === String(master.port)) break;
    if (i > 100) throw new Error('the sentinel does not know the master');
    await new Promise((r) => setTimeout(r, 100));
  }
  probe.disconnect();
  const scope = redisScope(master.url);
  h = await startRedisWorker({
    scope,
    url: `sentinel://127.0.0.1:${sentinelPort}/0`,
    env: { CELERY_BROKER_TRANSPORT_OPTIONS: JSON.stringify({ global_keyprefix: scope.prefix, master_name: MASTER }) },
  });
}, 120_000);
afterAll(async () => {
  await h?.stop();
  // The harness closes only scopes it made.
  await h?.scope.close();
  await terminate(sentinel);
  await master.remove();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('own wiring: through a real sentinel: Python Celery sends (protocol 2) to our worker, which found the master the same way; the sum comes back', async () => {
  const { stdout } = await run(
    PYTHON,
    ['spec/interop/python/client.py', `sentinel://127.0.0.1:${sentinelPort}/0`, REDIS_URL, '2', h.queue],
    {
      timeout: 120_000,
      env: {
        ...process.env,
        BROKER_TRANSPORT_OPTIONS: JSON.stringify({ global_keyprefix: h.scope.prefix, master_name: MASTER }),
      },
    },
  );
  const out = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
  expect(out.positional).toEqual({ ok: 5, state: 'SUCCESS' });
  expect(out.keyword).toEqual({ ok: 42, state: 'SUCCESS' });
  // What kombu keeps (bindings under our prefix) is on the master the sentinel named.
  expect((await h.scope.redis.keys(`${h.scope.prefix}*`)).length).toBeGreaterThan(0);
}, 150_000);
