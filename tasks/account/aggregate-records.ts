/**
 * `aggregate_records`: rolls `account_charge` rows up into `account_aggregatedcharges` per resource, charge
 * type and hour, and deletes the rows it rolled up; then rolls last month's hourly aggregates up per day.
 * As Smarter's `aggregate_charges()`, each pass is one transaction over the charges that exist when it starts, so a
 * crash loses nothing and a charge created meanwhile waits for the next run; here those rows are also locked, so
 * two runs at once never count a charge twice. The daily rows fill the NOT NULL `hour` column with 0. Sums are exact; `total_cost` is rounded half-even to the column's 5 places,
 * as Django would.
 */
import type { Database } from '../db/database.js';
import { periodicTask } from '../env/periodic-task.js';
import type { TaskEnv } from '../env/task-env.js';
import {
  clearChargeScratch,
  createChargeScratch,
  deleteAggregates,
  deleteTakenCharges,
  dropChargeScratch,
  insertAggregates,
  lockMonthAggregates,
  takeCharges,
  takenChargeGroups,
  unrolledDays,
  widenGroupConcat,
} from './rows.js';

/**
 * Hourly pass: returns the number of charges rolled up. The ids are locked and copied first, and exactly
 * those rows are summed and deleted, so a charge committed meanwhile is left for the next run, never deleted
 * unsummed. READ COMMITTED: no gap locks, so create_charge's INSERTs never wait for (or deadlock with) it.
 */
export async function aggregateCharges(db: Database): Promise<number> {
  return db.transaction(
    async (tx) => {
      await createChargeScratch(tx);
      await clearChargeScratch(tx);
      try {
        // A concurrent run waits on these row locks, then finds the rows gone.
        if ((await takeCharges(tx)) === 0) return 0;
        await insertAggregates(tx, await takenChargeGroups(tx));
        return await deleteTakenCharges(tx);
      } finally {
        await dropChargeScratch(tx);
      }
    },
    { isolation: 'READ COMMITTED' },
  );
}

/** Month-end pass: last month's aggregates become one row per resource, type and day (hour 0). */
export async function rollUpLastMonth(db: Database, now = new Date()): Promise<number> {
  const last = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  const y = last.getUTCFullYear();
  const m = last.getUTCMonth() + 1;
  return db.transaction(async (tx) => {
    await widenGroupConcat(tx);
    await lockMonthAggregates(tx, y, m);
    // Only days not yet rolled up (more than one row, or a row of another hour): a second run changes nothing.
    const groups = await unrolledDays(tx, y, m);
    if (groups.length === 0) return 0;
    const ids = groups.flatMap((g) => g.ids);
    await deleteAggregates(tx, ids);
    await insertAggregates(tx, groups);
    return ids.length;
  });
}

export const aggregateRecords = (env: TaskEnv) =>
  periodicTask<null>({
    name: 'smarter.apps.account.tasks.aggregate_records',
    queue: env.operationalQueue,
    retry: env.autoretry,
    async run(ctx) {
      const charges = await aggregateCharges(ctx.deps.db);
      const monthly = await rollUpLastMonth(ctx.deps.db);
      ctx.logger.info('aggregate_records', { charges_aggregated: charges, last_month_rows_rolled_up: monthly });
      return null;
    },
  });
