/**
 * `evaluate_budget_constraints()`: hourly; see budgets.ts. Returns what Smarter's `evaluate_budgets()` returns:
 * the number of constraints that lock their resource (Smarter's docstring says "locked resources").
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { evaluateBudgets } from './budgets.js';

export const evaluateBudgetConstraints = (env: TaskEnv) =>
  defineTask<Record<string, never>, number, SmarterDeps>({
    name: 'smarter.apps.account.tasks.evaluate_budget_constraints',
    queue: env.operationalQueue,
    retry: env.autoretry,
    params: z.strictObject({}),
    async run(_p, ctx) {
      const locked = await evaluateBudgets(ctx.deps.db, { onError: (m) => ctx.logger.error(m) });
      ctx.logger.info('evaluate_budget_constraints', { locking_constraints: locked });
      return locked;
    },
  });
