/** The guardrail app's table, `guardrail_guardrailevent`. */
import type { Queryable } from '../db/database.js';

/** Deletes the events older than `days`, keeping the flagged or escalated ones nobody has reviewed; how many went. */
export async function purgeEvents(db: Queryable, days: number): Promise<number> {
  const res = await db.execute(
    `DELETE FROM guardrail_guardrailevent
      WHERE created_at < UTC_TIMESTAMP(6) - INTERVAL ? DAY
        AND NOT (UPPER(disposition) IN ('FLAGGED', 'ESCALATED') AND reviewed = 0)`,
    [days],
  );
  return res.affectedRows;
}
