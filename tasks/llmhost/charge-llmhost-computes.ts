/**
 * `charge_llmhost_computes()`: each LLMHostCompute with ready nodes and a price is charged one hour of
 * `price_per_hour × ready_nodes`, as three charges (the compute, its owner's user profile, their account).
 * As Smarter's `Charge.objects.create` with its `new_charge_created` receiver: each charge is committed on its
 * own and the charged resource's budgets are evaluated right after it, so a budget locks within the hour; a
 * failed charge is logged and the others are still made. Returns `{compute name: cost}` as Smarter does.
 * A redelivered run (same task id) writes none of the charges the first run committed, evaluates their budgets
 * again and returns the same map.
 */
import { CHARGE_COST_PLACES, evaluateBudgets } from '../account/index.js';
import { Dec } from '../db/decimal.js';
import { insertModel, recordLocator } from '../db/django.js';
import { once } from '../db/once.js';
import { periodicTask } from '../env/periodic-task.js';
import type { TaskEnv } from '../env/task-env.js';
import { chargeableComputes } from './rows.js';

export const chargeLlmhostComputes = (env: TaskEnv) =>
  periodicTask<Record<string, string>>({
    name: 'smarter.apps.llmhost.tasks.charge_llmhost_computes',
    queue: env.operationalQueue,
    deadLetterOnExhaustion: true,
    async run(ctx) {
      const { db } = ctx.deps;
      const computes = await chargeableComputes(db);
      const out: Record<string, string> = {};
      for (const c of computes) {
        const cost = Dec.of(c.pricePerHour).mul(Dec.of(c.readyNodes));
        const locators = [
          recordLocator('LLMHostCompute', c.id),
          recordLocator('UserProfile', c.profileId),
          recordLocator('Account', c.accountId),
        ];
        for (const resource_locator of locators) {
          try {
            // Once per task id and charge (tasks/db/once.ts): a redelivered run skips the charges it committed.
            await once(
              db,
              { taskId: ctx.id, taskName: ctx.name, effect: `${String(c.id)} ${resource_locator}` },
              (tx) =>
                insertModel(tx, 'account_charge', {
                  resource_locator,
                  charge_type: 'compute',
                  prompt_tokens: 0,
                  completion_tokens: 0,
                  total_tokens: 0,
                  total_cost: cost.quantize(CHARGE_COST_PLACES).toString(),
                }).then(() => undefined),
            );
          } catch (err) {
            ctx.logger.error(
              `charge_llmhost_computes() failed to charge ${resource_locator}: ${(err as Error).message}`,
            );
            continue;
          }
          // The charge stands whatever its evaluation does; the hourly evaluate_budget_constraints tries again.
          await evaluateBudgets(db, { locator: resource_locator, onError: (m) => ctx.logger.error(m) }).catch(
            (err: unknown) =>
              ctx.logger.error(
                `charge_llmhost_computes() charged ${resource_locator}, and the evaluation of its budgets failed: ${(err as Error).message}`,
              ),
          );
        }
        out[c.name] = cost.toString();
      }
      return out;
    },
  });
