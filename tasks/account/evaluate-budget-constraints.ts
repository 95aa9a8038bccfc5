/**
 * `evaluate_budget_constraints()`: hourly; see budgets.ts. Returns what Smarter's `evaluate_budgets()` returns:
 * the number of constraints that lock their resource (Smarter's docstring says "locked resources").
 */
import { periodicTask } from '../env/periodic-task.js';
import type { TaskEnv } from '../env/task-env.js';
import { evaluateBudgets } from './budgets.js';

export const evaluateBudgetConstraints = (env: TaskEnv) =>
  periodicTask<number>({
    name: 'smarter.apps.account.tasks.evaluate_budget_constraints',
    queue: env.operationalQueue,
    retry: env.autoretry,
    async run(ctx) {
      const locked = await evaluateBudgets(ctx.deps.db, { onError: (m) => ctx.logger.error(m) });
      ctx.logger.info('evaluate_budget_constraints', { locking_constraints: locked });
      return locked;
    },
  });
