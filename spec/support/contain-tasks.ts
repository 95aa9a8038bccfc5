/**
 * Tasks whose errors escape them, for the containment tests: each lets an error reach the process from something
 * it started (a timer, a promise nobody awaits, an EventEmitter or a stream with no 'error' listener) while it is still running.
 * `contain.slow` marks its start in Redis and finishes after `ms`: the run that must not be disturbed.
 */
import { EventEmitter } from 'node:events';
import { createReadStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { PyValueError, runCounter } from './test-tasks.js';

/** Long enough that only the escaped error can end the run first. */
const HOLD_MS = 20_000;

/** Starts an error on its way out of the task, then holds the run: only that error can end it first. */
async function holdAfter(escape: () => void): Promise<string> {
  escape();
  await sleep(HOLD_MS);
  return 'not reached';
}

/** The ways an error with the task's `message` escapes it, by task name. */
const ESCAPES: Record<string, (message: string) => void> = {
  'contain.timer_throw': (message) =>
    setTimeout(() => {
      throw new PyValueError(message);
    }, 20),
  'contain.reject_unawaited': (message) =>
    void (async () => {
      await sleep(20);
      throw new PyValueError(message);
    })(),
  'contain.emitter_error': (message) => {
    const emitter = new EventEmitter();
    setTimeout(() => emitter.emit('error', new PyValueError(message)), 20);
  },
};

export function containTasks(queue: string) {
  return [
    ...Object.entries(ESCAPES).map(([name, escape]) =>
      defineTask({
        name,
        queue,
        params: z.object({ message: z.string() }),
        run: ({ message }) => holdAfter(() => escape(message)),
      }),
    ),
    defineTask({
      // A stream with no 'error' listener, failing from an fs callback.
      name: 'contain.stream_error',
      queue,
      params: z.object({ path: z.string() }),
      run: ({ path }) => holdAfter(() => createReadStream(path).resume()),
    }),
    defineTask({
      // Its policy retries any error once: a timer's error earns that retry, as an error the task threw would.
      name: 'contain.timer_throw_autoretry',
      queue,
      params: z.object({ key: z.string() }),
      retry: { autoretryFor: 'all', maxRetries: 1, defaultRetryDelay: 0 },
      run: async ({ key }, ctx) => {
        await runCounter().incr(key);
        return holdAfter(() =>
          setTimeout(() => {
            throw new PyValueError(`from a timer (retries=${ctx.retries})`);
          }, 20),
        );
      },
    }),
    defineTask({
      name: 'contain.slow',
      queue,
      params: z.object({ key: z.string(), ms: z.number() }),
      run: async ({ key, ms }, ctx) => {
        await runCounter().hset(`${key}:started`, ctx.id, Date.now());
        await sleep(ms);
        return 'finished';
      },
    }),
  ];
}
