/**
 * The lifecycle hooks of an embedding program (lib/app/hooks.ts), as Celery's signals: worker ready once the
 * queues are consumed; for each run prerun, then the event of the way it ended (success, failure, retry), then
 * postrun with its state; worker shutdown once stopped. A hook that throws is logged and changes nothing; a
 * message that never ran (an unknown task) is no task failure. On the in-memory broker.
 */
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { type HookEvents, WorkerHooks } from '../../lib/app/hooks.js';
import { encodeTaskMessage } from '../../lib/protocol/encode.js';
import { defineTask } from '../../lib/registry/define-task.js';
import { MemoryBroker, MemoryStore } from '../support/memory-broker.js';
import { failingTask, memoryConfig, memoryWorker } from '../support/memory-worker.js';
import { waitFor } from '../support/wait.js';

const Q = 'hooks';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = (fn: () => boolean, timeoutMs = 5000) => waitFor(fn, timeoutMs, 5);

const tasks = [
  defineTask({
    name: 'hooks.add',
    queue: Q,
    params: z.object({ x: z.number(), y: z.number() }),
    run: (p) => p.x + p.y,
  }),
  failingTask('hooks.fail', Q, 'boom'),
  defineTask({
    name: 'hooks.again',
    queue: Q,
    params: z.object({}),
    run: async (_p, ctx) => (ctx.retries === 0 ? ctx.retry({ countdown: 0 }) : 'second time'),
  }),
];

describe('own wiring: lifecycle hooks', () => {
  const seen: string[] = [];
  const payloads: Array<[keyof HookEvents, unknown]> = [];
  const hooks = new WorkerHooks();
  const broker = new MemoryBroker(new MemoryStore());
  const values = memoryConfig(Q, {
    CELERY_WORKER_CONCURRENCY: '1',
    CELERY_WORKER_HOSTNAME: 'hooks@test',
    SMARTER_WORKER_SHUTDOWN_GRACE: '1',
  });
  const { app } = memoryWorker({ config: values, tasks, defaultQueue: Q, broker, hooks });
  const names: Array<keyof HookEvents> = [
    'workerReady',
    'taskPrerun',
    'taskSuccess',
    'taskFailure',
    'taskRetry',
    'taskPostrun',
    'workerShutdown',
  ];
  for (const name of names) {
    hooks.on(name, (e) => {
      const tag = 'task' in e ? `${name}:${e.task}${'state' in e ? `:${e.state}` : ''}` : name;
      seen.push(tag);
      payloads.push([name, e]);
    });
  }
  // A hook that throws, before the others of its event: logged, and the rest still run.
  const off = hooks.on('taskPrerun', () => {
    throw new Error('a broken hook');
  });
  const send = async (task: string, kwargs: Record<string, unknown> = {}) => {
    const id = randomUUID();
    await broker.send(Q, encodeTaskMessage({ id, task, args: [], kwargs }));
    return id;
  };
  const until_ = (tag: string) => until(() => seen.includes(tag));

  beforeAll(async () => {
    await app.start();
  });

  test('worker ready comes once the worker consumes', () => {
    expect(seen).toEqual(['workerReady']);
    expect(payloads[0]).toEqual(['workerReady', { nodeName: 'hooks@test' }]);
  });

  test('a success: prerun, success with the result, postrun SUCCESS, in that order, despite a hook that throws', async () => {
    seen.length = 0;
    const id = await send('hooks.add', { x: 2, y: 3 });
    await until_('taskPostrun:hooks.add:SUCCESS');
    expect(seen).toEqual(['taskPrerun:hooks.add', 'taskSuccess:hooks.add', 'taskPostrun:hooks.add:SUCCESS']);
    const success = payloads.find(([n]) => n === 'taskSuccess')?.[1] as HookEvents['taskSuccess'];
    expect(success).toMatchObject({ taskId: id, task: 'hooks.add', result: 5 });
    expect(success.request.kwargs).toEqual({ x: 2, y: 3 });
    off();
  });

  test('a failure: prerun, failure with the error, postrun FAILURE', async () => {
    seen.length = 0;
    await send('hooks.fail');
    await until_('taskPostrun:hooks.fail:FAILURE');
    expect(seen).toEqual(['taskPrerun:hooks.fail', 'taskFailure:hooks.fail', 'taskPostrun:hooks.fail:FAILURE']);
    const failure = payloads.filter(([n]) => n === 'taskFailure').pop()?.[1] as HookEvents['taskFailure'];
    expect(failure.error.message).toBe('boom');
    expect(failure.traceback).toContain('ValueError: boom');
  });

  test('a retry: postrun RETRY, then the retried message runs as a new prerun', async () => {
    seen.length = 0;
    await send('hooks.again');
    await until_('taskPostrun:hooks.again:SUCCESS');
    expect(seen).toEqual([
      'taskPrerun:hooks.again',
      'taskRetry:hooks.again',
      'taskPostrun:hooks.again:RETRY',
      'taskPrerun:hooks.again',
      'taskSuccess:hooks.again',
      'taskPostrun:hooks.again:SUCCESS',
    ]);
  });

  test('an unknown task never ran: no hook', async () => {
    seen.length = 0;
    await send('hooks.nope');
    await sleep(100);
    expect(seen).toEqual([]);
  });

  test('worker shutdown once, after the worker stopped', async () => {
    await app.shutdown();
    await app.shutdown();
    expect(seen).toEqual(['workerShutdown']);
  });
});
