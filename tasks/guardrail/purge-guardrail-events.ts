/**
 * `purge_guardrail_events(days=90)`: deletes guardrail events older than `days`, keeping the flagged or
 * escalated ones nobody has reviewed. Returns the number deleted.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { purgeEvents } from './rows.js';

export const purgeGuardrailEvents = (env: TaskEnv) =>
  defineTask<{ days: number }, number, SmarterDeps>({
    name: 'smarter.apps.guardrail.tasks.purge_guardrail_events',
    queue: env.operationalQueue,
    params: z.strictObject({ days: z.number().int().min(0).default(90) }),
    async run(p, ctx) {
      const deleted = await purgeEvents(ctx.deps.db, p.days);
      ctx.logger.info('purge_guardrail_events', { days: p.days, deleted });
      return deleted;
    },
  });
