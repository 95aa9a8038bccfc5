/**
 * `test.stamp`: counts each completed run per task id in Redis and records how early or late it started (ms
 * after due). It counts at the end, so a run killed midway is not counted. Python's pyworker.py has the same.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { runCounter } from './test-tasks.js';

export function stampTask(queue: string, opts: { acksLate?: boolean; runMs?: number } = {}) {
  return defineTask({
    name: 'test.stamp',
    queue,
    ...(opts.acksLate ? { acksLate: true } : {}),
    params: z.object({ key: z.string(), due_ms: z.number() }),
    run: async ({ key, due_ms }, ctx) => {
      const late = Date.now() - due_ms;
      if (opts.runMs) await new Promise((r) => setTimeout(r, opts.runMs));
      await runCounter().hincrby(`${key}:runs`, ctx.id, 1);
      await runCounter().hincrby(`${key}:by`, 'ours', 1);
      await runCounter().hset(`${key}:late`, ctx.id, late);
      return 'stamped';
    },
  });
}
