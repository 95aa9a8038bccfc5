/** Smarter's `account` app: `smarter.apps.account.tasks.*`, all on the operational queue. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { aggregateRecords } from './aggregate-records.js';
import { createCharge } from './create-charge.js';
import { evaluateBudgetConstraints } from './evaluate-budget-constraints.js';

export const accountTasks = (env: TaskEnv): AnyTask<SmarterDeps>[] => [
  createCharge(env),
  aggregateRecords(env),
  evaluateBudgetConstraints(env),
];

/** What the llmhost app uses of this one: budgets and resource locks, and the places a charge's cost keeps. */
export { evaluateBudgets, resourceLockMessage } from './budgets.js';
export { CHARGE_COST_PLACES } from './create-charge.js';
