/**
 * `purge_guardrail_events(days=90)`: deletes guardrail events older than `days`, keeping the flagged or
 * escalated ones nobody has reviewed. Returns the number deleted.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../deps.js';

export const purgeGuardrailEvents = (env: TaskEnv) =>
  defineTask<{ days: number }, number, SmarterDeps>({
    name: 'smarter.apps.guardrail.tasks.purge_guardrail_events',
    queue: env.operationalQueue,
    params: z.strictObject({ days: z.number().int().min(0).default(90) }),
    async run(p, ctx) {
      const res = await ctx.deps.db.execute(
        `DELETE FROM guardrail_guardrailevent
          WHERE created_at < UTC_TIMESTAMP(6) - INTERVAL ? DAY
            AND NOT (UPPER(disposition) IN ('FLAGGED', 'ESCALATED') AND reviewed = 0)`,
        [p.days],
      );
      ctx.logger.info('purge_guardrail_events', { days: p.days, deleted: res.affectedRows });
      return res.affectedRows;
    },
  });
