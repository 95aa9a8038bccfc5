/**
 * A Redis broker that refuses writes (maxmemory reached) while the worker starts is waited for with backoff,
 * as one that is down: the worker is blocked and not ready meanwhile (`/readyz` 503 naming the block, the gauge
 * at 1), never a fatal exit, and it starts consuming once Redis takes writes. On a redis-server of its own.
 */
import type { Redis } from 'ioredis';
import { waitFor } from '../support/wait.js';
import { type Harness, startWorker } from '../support/harness.js';
import { type LogLine, recordingLogger } from '../support/logs.js';
import { probe } from '../support/pushback.js';
import { freePort } from '../support/rabbit-node.js';
import { type RedisNode, redisNodeForFile } from '../support/redis-node.js';

let node: RedisNode;
let admin: Redis;
redisNodeForFile((r) => ({ node, admin } = r));

test('own wiring: a Redis broker at maxmemory at start: waited for (503, blocked), then the worker starts and consumes', async () => {
  const port = await freePort();
  const lines: LogLine[] = [];
  await admin.config('SET', 'maxmemory', '1');
  let failed: unknown;
  let h: Harness | undefined;
  const starting = startWorker({
    logger: recordingLogger(lines),
    env: { CELERY_BROKER_URL: node.url, SMARTER_WORKER_HTTP_PORT: String(port) },
  }).then(
    (started) => (h = started),
    (err: unknown) => (failed = err),
  );
  try {
    const notReady = await waitFor(
      async () => {
        const r = await probe(port, '/readyz').catch(() => undefined);
        return r?.status === 503 && r.body.includes('broker blocked publishing') ? r : undefined;
      },
      15_000,
      200,
    );
    expect(notReady.body).toMatch(/OOM command not allowed/);
    expect((await probe(port, '/metrics')).body).toMatch(/^smarter_worker_broker_blocked 1$/m);
    await new Promise((r) => setTimeout(r, 2000));
    expect(failed).toBeUndefined();
    expect(h).toBeUndefined();
  } finally {
    await admin.config('SET', 'maxmemory', '0');
  }
  await starting;
  expect(failed).toBeUndefined();
  try {
    await waitFor(async () => (await probe(port, '/readyz')).status === 200, 30_000, 200);
    expect(lines.filter((l) => l.message.startsWith('broker blocked publishing'))).toHaveLength(1);
    expect(lines.filter((l) => l.message.startsWith('broker unblocked after'))).toHaveLength(1);
  } finally {
    await h?.app.shutdown();
  }
}, 90_000);
