/**
 * Tasks of the fault suite. `fault.work` marks its start and its end in Redis (per task id), so a test can tell
 * after a crash which runs had begun and never finished; `fault.block` holds the event loop, as a CPU-bound or
 * synchronous task would.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { runCounter } from './test-tasks.js';

export function faultTasks(queue: string, opts: { acksLate?: boolean } = {}) {
  return [
    defineTask({
      name: 'fault.work',
      queue,
      ...(opts.acksLate ? { acksLate: true } : {}),
      params: z.object({ key: z.string(), ms: z.number().default(0) }),
      run: async ({ key, ms }, ctx) => {
        await runCounter().hset(`${key}:started`, ctx.id, Date.now());
        if (ms > 0) await sleep(ms);
        await runCounter().hincrby(`${key}:done`, ctx.id, 1);
        return 'done';
      },
    }),
    defineTask({
      name: 'fault.block',
      queue,
      params: z.object({ ms: z.number() }),
      run: ({ ms }) => {
        const until = Date.now() + ms;
        while (Date.now() < until) {
          // a synchronous loop on purpose: nothing else runs in this process meanwhile
        }
        return ms;
      },
    }),
  ];
}
