/**
 * `create_charge(*args, **kwargs)`: one charge for one resource. Without `total_cost` the tokens are priced
 * with `account_llmprices` (USD per million tokens; provider matched without regard to case; no price
 * costs nothing). Smarter caught and only logged a failed INSERT, so a charge could vanish; here a database
 * error propagates, is retried with Smarter's backoff, and ends as FAILURE after the last retry. After the
 * insert, the budgets attached to the resource are evaluated, as the Charge model's signal does in Smarter.
 */
import * as z from 'zod';
import { PyDecimal } from '../../lib/protocol/values.js';
import { Batcher } from '../db/batcher.js';
import type { Database, Queryable } from '../db/database.js';
import { Dec } from '../db/decimal.js';
import { insertModels } from '../db/django.js';
import { type EffectKey, writeOnce } from '../db/once.js';
import type { TaskEnv } from '../env/task-env.js';
import { recordTask } from '../env/queued-task.js';
import { DatabaseError } from '../errors.js';
import { evaluateBudgets } from './budgets.js';
import { constrainedLocators, llmPrice } from './rows.js';

const tokens = z.number().int().min(0).max(2_147_483_647);
const amount = z.union([z.instanceof(PyDecimal), z.string(), z.number()]).transform((v, ctx) => {
  try {
    return Dec.of(v);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

const params = z.object({
  resource_locator: z.string().min(1).max(255),
  charge_type: z.string().min(1).max(20),
  prompt_tokens: tokens,
  completion_tokens: tokens,
  total_tokens: tokens,
  total_cost: amount.nullish(),
  provider: z.string().nullish(),
  model: z.string().nullish(),
});

/**
 * `LLMPrices.cost_of` (`account/models/llm_prices.py`): price per million tokens × tokens, exact here and rounded
 * half-even to the column's 8 places on insert, as Smarter's `quantize(Decimal("0.00000001"))` rounds it. The
 * provider is matched without regard to case (`provider__iexact`), the model as the column's collation compares it.
 */
export async function costOf(
  db: Queryable,
  chargeType: string,
  provider: string | null | undefined,
  model: string | null | undefined,
  totalTokens: number,
): Promise<Dec> {
  if (!provider || !model) return Dec.zero();
  const price = await llmPrice(db, chargeType, provider, model);
  if (price === null) return Dec.zero();
  return Dec.of(price).mul(Dec.of(totalTokens)).shift(6);
}

export const CHARGE_COST_PLACES = 8;

type ChargeRow = [locator: string, type: string, prompt: number, completion: number, total: number, cost: string];
const CHARGE_COLUMNS = [
  'resource_locator',
  'charge_type',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'total_cost',
];

/**
 * Charges are many and small: they are written by group commit (see Batcher), one multi-row INSERT per
 * batch, and the budget lookup is one query per batch too. Each task still resolves only once its own row
 * is committed, and learns whether its resource has a budget attached.
 *
 * Under lock contention one attempt waits about one lock timeout (`innodb_lock_wait_timeout`): a batch that
 * times out on a lock (or deadlocks, or loses its connection) fails all its tasks at once, and each retries with
 * Smarter's backoff; only a value or key one row can get wrong (DataError, IntegrityError) splits the batch
 * into single rows. The tasks of a batch wait on it together (`ctx.waitingOn`): past the wait budget, the
 * batch is reported once, not once per task.
 */
function oneRowCanCause(err: unknown): boolean {
  return !(err instanceof DatabaseError) || err.pyType === 'DataError' || err.pyType === 'IntegrityError';
}

const writers = new WeakMap<Database, Batcher<[EffectKey, ChargeRow], boolean>>();

function writerFor(db: Database): Batcher<[EffectKey, ChargeRow], boolean> {
  let w = writers.get(db);
  if (!w) {
    w = new Batcher(
      async (items) => {
        // Once per task id (tasks/db/once.ts): a redelivered charge finds its marker and is not written again.
        await writeOnce(
          db,
          items,
          ([key]) => key,
          (tx, fresh) =>
            insertModels(
              tx,
              'account_charge',
              CHARGE_COLUMNS,
              fresh.map(([, row]) => row),
            ).then(() => undefined),
        );
        const rows = items.map(([, row]) => row);
        const locators = [...new Set(rows.map((r) => r[0]))];
        const attached = await constrainedLocators(db, locators)
          // The rows are committed: a failed lookup must not fail (and so retry) their tasks.
          .catch(() => new Set(locators));
        return rows.map((r) => attached.has(r[0]));
      },
      { splitOn: oneRowCanCause, name: 'create_charge batch' },
    );
    writers.set(db, w);
  }
  return w;
}

export const createCharge = (env: TaskEnv) =>
  recordTask<z.output<typeof params>, null>(env, {
    name: 'smarter.apps.account.tasks.create_charge',
    varArgs: true,
    params,
    async run(p, ctx) {
      const { db } = ctx.deps;
      const cost = p.total_cost ?? (await costOf(db, p.charge_type, p.provider, p.model, p.total_tokens));
      const row: ChargeRow = [
        p.resource_locator,
        p.charge_type,
        p.prompt_tokens,
        p.completion_tokens,
        p.total_tokens,
        cost.quantize(CHARGE_COST_PLACES).toString(),
      ];
      const attached = await writerFor(db)
        .submit([{ taskId: ctx.id, taskName: ctx.name }, row], (batch) => ctx.waitingOn(batch))
        .finally(() => ctx.waitingOn(null));
      if (attached) {
        // The charge is committed: failing the task here would only retry an evaluation. A budget left
        // unevaluated here is evaluated again by the hourly evaluate_budget_constraints.
        await evaluateBudgets(db, {
          locator: p.resource_locator,
          onError: (m) => ctx.logger.error(m),
        }).catch((err: unknown) =>
          ctx.logger.error('create_charge: charge recorded, budget evaluation failed', {
            resource_locator: p.resource_locator,
            error: String(err),
          }),
        );
      }
      return null;
    },
  });
