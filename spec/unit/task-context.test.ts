/** The task context alone: retry, checkAgain and applyAsync, with a recording publisher and no broker. */
import { nullLogger } from '../../lib/logger.js';
import { decodeTaskMessage } from '../../lib/protocol/decode.js';
import { type OutgoingTask, encodeTaskMessage } from '../../lib/protocol/encode.js';
import type { TaskMessage } from '../../lib/protocol/types.js';
import { ANY_QUEUE } from '../../lib/registry/define-task.js';
import type { Route } from '../../lib/worker/publisher.js';
import { type ContextInput, type ContextPublisher, createTaskContext } from '../../lib/worker/run/task-context.js';

const NOW = Date.UTC(2026, 11, 1, 9, 0, 0);

function message(o: Partial<OutgoingTask> = {}): TaskMessage {
  const raw = encodeTaskMessage(
    { id: 'run-1', task: 'app.check', args: [], kwargs: { key: 'k', attempt: 2 }, ...o },
    NOW,
  );
  return decodeTaskMessage({ body: raw.body, properties: raw.properties }, { accept: ['json'] });
}

function recorder(fail = false) {
  const sent: Array<{ task: OutgoingTask; route: Route | undefined }> = [];
  const applied: Array<{
    name: string;
    args: unknown[];
    kwargs: Record<string, unknown>;
    options: unknown;
    parent: TaskMessage | undefined;
  }> = [];
  const publisher: ContextPublisher = {
    send: async (task, route) => {
      if (fail) throw new Error('broker gone');
      sent.push({ task, route });
    },
    apply: async (name, args, kwargs, options, parent) => {
      applied.push({ name, args, kwargs, options, parent });
      return `next-${applied.length}`;
    },
    applySignature: async () => 'sig',
  };
  return { sent, applied, publisher };
}

function input(o: {
  msg?: TaskMessage;
  publisher: ContextPublisher;
  task?: Partial<ContextInput<unknown>['task']>;
  exchange?: string;
}): ContextInput<unknown> {
  return {
    msg: o.msg ?? message(),
    task: { queue: 'checks', ...o.task },
    delivery: { queue: 'consumed', exchange: o.exchange ?? '', routingKey: 'consumed', redelivered: false },
    publisher: o.publisher,
    backend: { get: async () => null },
    nodeName: 'n@h',
    deps: {},
    logger: nullLogger(),
    control: new AbortController(),
    now: () => NOW,
  };
}

test('retry sends the same message again, retries + 1, to the queue it came from, and ends the run with Retry', async () => {
  const r = recorder();
  const { ctx } = createTaskContext(input({ publisher: r.publisher }));
  await expect(ctx.retry({ countdown: 30 })).rejects.toMatchObject({ code: 'TASK_RETRY', countdownSeconds: 30 });
  expect(r.sent).toHaveLength(1);
  expect(r.sent[0]?.task).toMatchObject({ id: 'run-1', task: 'app.check', retries: 1 });
  expect(r.sent[0]?.task.eta?.epochMs).toBe(NOW + 30_000);
  expect(r.sent[0]?.route).toEqual({ queue: 'consumed' });
});

test('a retry of a message that came through an exchange goes back through that exchange', async () => {
  const r = recorder();
  const { ctx } = createTaskContext(input({ publisher: r.publisher, exchange: 'tasks' }));
  await expect(ctx.retry()).rejects.toMatchObject({ code: 'TASK_RETRY' });
  expect(r.sent[0]?.route).toEqual({ exchange: 'tasks', routingKey: 'consumed' });
});

test('past maxRetries the cause is thrown, or MaxRetriesExceededError when there is none; nothing is sent', async () => {
  const r = recorder();
  const { ctx } = createTaskContext(
    input({ publisher: r.publisher, msg: message({ retries: 3 }), task: { retry: { maxRetries: 3 } } }),
  );
  const cause = new RangeError('still down');
  await expect(ctx.retry({ exc: cause })).rejects.toBe(cause);
  await expect(ctx.retry()).rejects.toMatchObject({ code: 'TASK_MAX_RETRIES' });
  expect(r.sent).toHaveLength(0);
});

test('a retry that cannot be published is its own error, never a Retry', async () => {
  const r = recorder(true);
  const { ctx } = createTaskContext(input({ publisher: r.publisher }));
  await expect(ctx.retry()).rejects.toMatchObject({
    code: 'TASK_RETRY_UNPUBLISHABLE',
    message: expect.stringContaining('broker gone') as string,
  });
});

test('checkAgain sends this task again with the bound arguments, attempt + 1, after the wait, to its declared queue', async () => {
  const r = recorder();
  const c = createTaskContext(input({ publisher: r.publisher }));
  c.bind({ key: 'k', attempt: 2 });
  const next = await c.ctx.checkAgain({ after: 60, update: { stage: 'b' } });
  expect(next).toMatchObject({ nextId: 'next-1', attempt: 3, afterSeconds: 60 });
  expect(r.applied[0]).toMatchObject({
    name: 'app.check',
    args: [],
    kwargs: { key: 'k', attempt: 3, stage: 'b' },
    options: { countdown: 60, queue: 'checks' },
  });
  expect(r.applied[0]?.parent?.id).toBe('run-1');
});

test('checkAgain of a task declared for any queue goes back to the queue it was consumed from; past the limit it gives up', async () => {
  const r = recorder();
  const c = createTaskContext(
    input({ publisher: r.publisher, task: { queue: ANY_QUEUE, checks: { maxAttempts: 4 } } }),
  );
  c.bind({ key: 'k', attempt: 2 });
  await c.ctx.checkAgain({ after: 5 });
  expect(r.applied[0]?.options).toEqual({ countdown: 5, queue: 'consumed' });
  c.bind({ key: 'k', attempt: 3 });
  await expect(c.ctx.checkAgain({ after: 5 })).rejects.toMatchObject({ code: 'TASK_GAVE_UP' });
});

test('applyAsync sends with this run as the parent', async () => {
  const r = recorder();
  const { ctx } = createTaskContext(input({ publisher: r.publisher }));
  expect(await ctx.applyAsync('app.other', [1], { a: 2 }, { countdown: 3 })).toBe('next-1');
  expect(r.applied[0]).toMatchObject({ name: 'app.other', args: [1], kwargs: { a: 2 }, options: { countdown: 3 } });
  expect(r.applied[0]?.parent?.id).toBe('run-1');
});
