/**
 * The operator's tools on a Redis broker, as the CLI runs them (`smarter-worker delayed`, `dead-letter list`
 * and `replay`), reading the same CELERY_BROKER_TRANSPORT_OPTIONS as the workers: what waits in the
 * delayed set is listed; dead-lettered messages (a list named like RabbitMQ's queue) are counted by reason
 * and task, left in place, and replayed to a queue where they run.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import * as z from 'zod';
import { RedisBroker } from '../../lib/broker/redis/redis-broker.js';
import { nullLogger } from '../../lib/logger.js';
import { encodeTaskMessage } from '../../lib/protocol/index.js';
import { defineTask } from '../../lib/registry/define-task.js';
import { REDIS_URL, type RedisScope, redisScope } from '../support/redis.js';
import { startRedisWorker } from '../support/redis-harness.js';
import { ResultReader } from '../support/results.js';
import { testTasks } from '../support/test-tasks.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
let s: RedisScope;
const cli = (...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'tasks/main.ts', ...args], {
    env: {
      ...process.env,
      CELERY_BROKER_URL: REDIS_URL,
      CELERY_BROKER_TRANSPORT_OPTIONS: JSON.stringify({ global_keyprefix: s.prefix }),
    },
    timeout: 60_000,
  });

beforeEach(() => {
  s = redisScope();
});
afterEach(async () => s.close());

test("own wiring: smarter-worker delayed lists what waits in the delayed set under the workers' key prefix", async () => {
  const b = new RedisBroker({ url: REDIS_URL, logger: nullLogger(), keyPrefix: s.prefix });
  await b.connect();
  try {
    await b.sendLater('q', encodeTaskMessage({ id: randomUUID(), task: 'test.add', args: [1, 2], kwargs: {} }), 60_000);
    await b.sendLater(
      'q',
      encodeTaskMessage({ id: randomUUID(), task: 'test.add', args: [1, 2], kwargs: {} }),
      3_600_000,
    );
  } finally {
    await b.close();
  }
  const { stdout } = await cli('delayed');
  expect(stdout).toMatch(/^2 delayed message\(s\); the next is due within 6\d s$/m);
  expect(stdout).toContain(s.keys.delayed);
}, 60_000);

test('own wiring: dead-letter list counts a Redis dead-letter list by reason and task and leaves it; replay --task sends those back and they run', async () => {
  const before = await startRedisWorker({ scope: s });
  const dlq = `${before.queue}.dead_letter`;
  const ported: string[] = [];
  try {
    for (let i = 0; i < 20; i++) {
      const id = randomUUID();
      ported.push(id);
      await before.broker.send(before.queue, encodeTaskMessage({ id, task: 'test.ported', args: [i], kwargs: {} }));
    }
    for (let i = 0; i < 10; i++) {
      const id = randomUUID();
      await before.broker.send(before.queue, {
        body: Buffer.from('{not json'),
        properties: {
          contentType: 'application/json',
          contentEncoding: 'utf-8',
          headers: { id, task: 'test.add', lang: 'py' },
          correlationId: id,
          deliveryMode: 2,
          priority: 0,
        },
      });
    }
    await waitFor(async () => (await s.redis.llen(s.keys.queue(dlq, 0))) >= 30, 30_000, {
      stepMs: 100,
      what: '30 dead-lettered',
    });
  } finally {
    await before.stop();
  }
  // Listing takes each message and puts it back (marked redelivered, as kombu restores): same messages, same order.
  const ids = async () =>
    (await s.redis.lrange(s.keys.queue(dlq, 0), 0, -1)).map(
      (t) => (JSON.parse(t) as { properties: { correlation_id: string } }).properties.correlation_id,
    );
  const listed = await ids();
  expect(listed).toHaveLength(30);

  const { stdout } = await cli('dead-letter', 'list', before.queue);
  expect(stdout).toContain(`${dlq}: 30 message(s); oldest `);
  expect(stdout).toMatch(/^ +20 {2}test\.ported$/m);
  expect(stdout).toMatch(/^ +20 {2}task "test\.ported" is not registered$/m);
  expect(await ids()).toEqual(listed);
  // Neither the stopped worker nor the walk leaves a pop request behind.
  expect(await s.redis.keys(`${s.prefix}smarter.pop.*`)).toEqual([]);

  const portedTask = (q: string) =>
    defineTask({ name: 'test.ported', queue: q, params: z.object({ x: z.number() }), run: ({ x }) => x * 2 });
  const after = await startRedisWorker({ scope: s, tasks: (q) => [...testTasks(q), portedTask(q)] });
  const results = new ResultReader();
  try {
    const out = await cli('dead-letter', 'replay', dlq, '--task', 'test.ported', '--to', after.queue);
    expect(out.stdout).toContain(
      `replayed 20 message(s) from ${dlq} (20 to ${after.queue}); 10 not chosen left in place`,
    );
    for (const [i, id] of ported.entries()) {
      expect(await results.ready(id)).toMatchObject({ status: 'SUCCESS', result: i * 2 });
    }
    expect(await s.redis.llen(s.keys.queue(dlq, 0))).toBe(10);
  } finally {
    await results.close();
    await after.stop();
  }
}, 120_000);
