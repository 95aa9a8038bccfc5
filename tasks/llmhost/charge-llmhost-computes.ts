/**
 * `charge_llmhost_computes()`: each LLMHostCompute with ready nodes and a price is charged one hour of
 * `price_per_hour × ready_nodes`, as three charges (the compute, its owner's user profile, their account),
 * all in one transaction so that the three always agree. Returns `{compute name: cost}` as Smarter does.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { Dec } from '../db/decimal.js';
import { insertModel, recordLocator } from '../db/django.js';
import type { SmarterDeps, TaskEnv } from '../deps.js';
import { CHARGE_COST_PLACES } from '../account/create-charge.js';

export const chargeLlmhostComputes = (env: TaskEnv) =>
  defineTask<Record<string, never>, Record<string, string>, SmarterDeps>({
    name: 'smarter.apps.llmhost.tasks.charge_llmhost_computes',
    queue: env.operationalQueue,
    deadLetterOnExhaustion: true,
    params: z.strictObject({}),
    async run(_p, ctx) {
      const computes = await ctx.deps.db.select(
        `SELECT c.id, c.name, c.ready_nodes, c.price_per_hour, p.id AS profile_id, p.account_id
           FROM llmhost_llmhostcompute c JOIN account_userprofile p ON p.id = c.user_profile_id
          WHERE c.ready_nodes > 0 AND c.price_per_hour IS NOT NULL ORDER BY c.id`,
      );
      const out: Record<string, string> = {};
      for (const c of computes) {
        const cost = Dec.of(String(c.price_per_hour)).mul(Dec.of(Number(c.ready_nodes)));
        const locators = [recordLocator('LLMHostCompute', Number(c.id)), recordLocator('UserProfile', Number(c.profile_id)), recordLocator('Account', Number(c.account_id))];
        await ctx.deps.db.transaction(async (tx) => {
          for (const resource_locator of locators) {
            await insertModel(tx, 'account_charge', {
              resource_locator,
              charge_type: 'compute',
              prompt_tokens: 0,
              completion_tokens: 0,
              total_tokens: 0,
              total_cost: cost.quantize(CHARGE_COST_PLACES).toString(),
            });
          }
        });
        out[String(c.name)] = cost.toString();
      }
      return out;
    },
  });
