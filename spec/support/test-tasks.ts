/** Tasks used by the integration and interop tests; they exercise the worker, not Smarter. */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { WorkerError } from '../../lib/errors.js';
import { defineTask } from '../../lib/registry/define-task.js';

export class PyValueError extends WorkerError {
  readonly pyType = 'ValueError';
  readonly pyModule = 'builtins';
  readonly pyArgs: readonly unknown[];
  constructor(message: string) {
    super('TASK_DEFINITION_INVALID', message);
    this.pyArgs = [message];
  }
}

export function testTasks(queue: string) {
  return [
    defineTask({
      name: 'test.add',
      queue,
      params: z.object({ x: z.number(), y: z.number() }).strict(),
      run: ({ x, y }) => x + y,
    }),
    defineTask({
      name: 'test.echo',
      queue,
      varArgs: true,
      params: z.object({ args: z.array(z.unknown()) }).passthrough(),
      run: (p) => p,
    }),
    defineTask({
      name: 'test.fail',
      queue,
      params: z.object({ message: z.string() }),
      run: ({ message }) => {
        throw new PyValueError(message);
      },
    }),
    defineTask({
      name: 'test.flaky',
      queue,
      params: z.object({ succeedAfter: z.number().int() }),
      retry: { maxRetries: 5 },
      run: async ({ succeedAfter }, ctx) => {
        if (ctx.retries < succeedAfter) return ctx.retry({ countdown: 0.2, exc: new PyValueError(`attempt ${ctx.retries}`) });
        return `done after ${ctx.retries} retries`;
      },
    }),
    defineTask({
      name: 'test.autoretry',
      queue,
      params: z.object({}),
      retry: { autoretryFor: 'all', maxRetries: 2, retryBackoff: true, retryBackoffMax: 1 },
      run: (_p, ctx) => {
        throw new PyValueError(`always fails (retries=${ctx.retries})`);
      },
    }),
    defineTask({
      name: 'test.sleep',
      queue,
      params: z.object({ seconds: z.number() }),
      run: async ({ seconds }, ctx) => {
        await sleep(seconds * 1000, undefined, { signal: ctx.signal }).catch(() => {
          throw ctx.signal.reason;
        });
        return seconds;
      },
    }),
    defineTask({
      // Retries once with a 2 s countdown; the retry is meant to be picked up by a Python worker.
      name: 'test.handoff',
      queue,
      varArgs: true,
      params: z.object({ args: z.array(z.unknown()) }).passthrough(),
      run: async (_p, ctx) => (ctx.retries === 0 ? ctx.retry({ countdown: 2 }) : 'ts'),
    }),
    defineTask({
      name: 'test.never',
      queue,
      params: z.object({}),
      timeLimit: 1,
      run: () => new Promise(() => undefined),
    }),
    defineTask({
      name: 'test.late',
      queue,
      acksLate: true,
      params: z.object({ seconds: z.number() }),
      run: async ({ seconds }) => {
        await sleep(seconds * 1000);
        return 'late';
      },
    }),
  ];
}
