/**
 * `aggregate_records`: rolls `account_charge` rows up into `account_aggregatedcharges` per resource, charge
 * type and hour, and deletes the rows it rolled up; then rolls last month's hourly aggregates up per day.
 * Unlike Smarter's `aggregate_charges()`, each pass is one transaction over rows it has locked, so a crash
 * loses nothing, and two runs (twice, or at once) never count a charge twice; the daily rows fill the
 * NOT NULL `hour` column with 0. Sums are exact; `total_cost` is rounded half-even to the column's 5 places,
 * as Django would.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import type { Database, Queryable, Row } from '../db/database.js';
import { Dec } from '../db/decimal.js';
import { insertModels } from '../db/django.js';
import type { SmarterDeps, TaskEnv } from '../deps.js';

const COST_PLACES = 5;
const COLS = ['year', 'month', 'day', 'hour', 'resource_locator', 'charge_type', 'records', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'total_cost'];

async function insertAggregates(tx: Queryable, groups: Row[], hourOf: (g: Row) => number): Promise<void> {
  for (let i = 0; i < groups.length; i += 500) {
    const rows = groups.slice(i, i + 500).map((g) => [
      g.y, g.m, g.d, hourOf(g), g.resource_locator, g.charge_type, g.records, g.pt, g.ct, g.tt,
      Dec.of(String(g.cost)).quantize(COST_PLACES).toString(),
    ]);
    await insertModels(tx, 'account_aggregatedcharges', COLS, rows);
  }
}

/**
 * Hourly pass: returns the number of charges rolled up. The ids are locked and copied first, and exactly
 * those rows are summed and deleted, so a charge committed meanwhile is left for the next run, never deleted
 * unsummed. READ COMMITTED: no gap locks, so create_charge's INSERTs never wait for (or deadlock with) it.
 */
export async function aggregateCharges(db: Database): Promise<number> {
  return db.transaction(
    async (tx) => {
      await tx.execute('CREATE TEMPORARY TABLE IF NOT EXISTS aggregating_charge (id BIGINT PRIMARY KEY) ENGINE=MEMORY');
      await tx.execute('DELETE FROM aggregating_charge');
      try {
        // A concurrent run waits on these row locks, then finds the rows gone.
        const taken = await tx.execute('INSERT INTO aggregating_charge SELECT id FROM account_charge WHERE created_at IS NOT NULL FOR UPDATE');
        if (taken.affectedRows === 0) return 0;
        const groups = await tx.select(
          `SELECT YEAR(c.created_at) y, MONTH(c.created_at) m, DAY(c.created_at) d, HOUR(c.created_at) h, c.resource_locator, c.charge_type,
                  COUNT(*) records, SUM(c.prompt_tokens) pt, SUM(c.completion_tokens) ct, SUM(c.total_tokens) tt, SUM(c.total_cost) cost
             FROM account_charge c JOIN aggregating_charge a ON a.id = c.id
            GROUP BY y, m, d, h, c.resource_locator, c.charge_type`,
        );
        await insertAggregates(tx, groups, (g) => Number(g.h));
        const del = await tx.execute('DELETE c FROM account_charge c JOIN aggregating_charge a ON a.id = c.id');
        return del.affectedRows;
      } finally {
        await tx.execute('DROP TEMPORARY TABLE IF EXISTS aggregating_charge');
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
    await tx.execute('SET SESSION group_concat_max_len = 16777216');
    await tx.select('SELECT id FROM account_aggregatedcharges WHERE year = ? AND month = ? FOR UPDATE', [y, m]);
    // Only days not yet rolled up (more than one row, or a row of another hour): a second run changes nothing.
    const groups = await tx.select(
      `SELECT year y, month m, day d, resource_locator, charge_type, SUM(records) records, SUM(prompt_tokens) pt,
              SUM(completion_tokens) ct, SUM(total_tokens) tt, SUM(total_cost) cost, GROUP_CONCAT(id) ids
         FROM account_aggregatedcharges WHERE year = ? AND month = ?
        GROUP BY day, resource_locator, charge_type HAVING COUNT(*) > 1 OR MAX(hour) <> 0 FOR UPDATE`,
      [y, m],
    );
    if (groups.length === 0) return 0;
    const ids = groups.flatMap((g) => String(g.ids).split(',').map(Number));
    for (let i = 0; i < ids.length; i += 1000) {
      await tx.execute('DELETE FROM account_aggregatedcharges WHERE id IN (?)', [ids.slice(i, i + 1000)]);
    }
    await insertAggregates(tx, groups, () => 0);
    return ids.length;
  });
}

export const aggregateRecords = (env: TaskEnv) =>
  defineTask<Record<string, never>, null, SmarterDeps>({
    name: 'smarter.apps.account.tasks.aggregate_records',
    queue: env.operationalQueue,
    retry: env.autoretry,
    params: z.strictObject({}),
    async run(_p, ctx) {
      const charges = await aggregateCharges(ctx.deps.db);
      const monthly = await rollUpLastMonth(ctx.deps.db);
      ctx.logger.info('aggregate_records', { charges_aggregated: charges, last_month_rows_rolled_up: monthly });
      return null;
    },
  });
