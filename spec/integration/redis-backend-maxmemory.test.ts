/**
 * A Redis result backend at maxmemory refuses writes (`OOM command not allowed`): a result is tried again as
 * when Redis is down (the same tries and delays), not dropped at once; past the budget the store fails saying so.
 * On a redis-server of the test's own.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { META_PREFIX, RedisBackend, STORE_TRIES } from '../../lib/backend/redis-backend.js';
import { type RedisNode, redisNodeForFile } from '../support/redis-node.js';

let node: RedisNode;
let admin: Redis;
redisNodeForFile((r) => ({ node, admin } = r));

const success = (taskId: string) =>
  ({
    taskId,
    state: 'SUCCESS',
    result: 1,
    traceback: null,
    children: null,
    groupId: undefined,
    parentId: undefined,
  }) as const;

test('a result refused for memory is stored once Redis takes writes again', async () => {
  const backend = new RedisBackend(node.url, 3600);
  try {
    await admin.config('SET', 'maxmemory', '1');
    const id = randomUUID();
    const storing = backend.store(success(id));
    await new Promise((r) => setTimeout(r, 2000));
    expect(await admin.exists(META_PREFIX + id)).toBe(0);
    await admin.config('SET', 'maxmemory', '0');
    await storing;
    expect(await admin.get(META_PREFIX + id)).toContain('"SUCCESS"');
  } finally {
    await admin.config('SET', 'maxmemory', '0');
    await backend.close();
  }
}, 30_000);

test('a result refused for memory past every try fails, saying so', async () => {
  const backend = new RedisBackend(node.url, 3600, undefined, { oomDelayMs: () => 5 });
  try {
    await admin.config('SET', 'maxmemory', '1');
    await expect(backend.store(success(randomUUID()))).rejects.toThrow(
      new RegExp(`refused for memory ${STORE_TRIES} times: .*OOM command not allowed`),
    );
  } finally {
    await admin.config('SET', 'maxmemory', '0');
    await backend.close();
  }
}, 30_000);
