/** The plugin app's reads: a user's first profile, and a plugin's selector. */
import type { Queryable } from '../db/database.js';
import { num } from '../db/columns.js';

/** The user's first `account_userprofile` (by id), or null. */
export async function firstProfileOfUser(db: Queryable, userId: number): Promise<number | null> {
  const rows = await db.select('SELECT id FROM account_userprofile WHERE user_id = ? ORDER BY id LIMIT 1', [userId]);
  return rows[0] ? num(rows[0].id) : null;
}

/** The plugin's `plugin_pluginselector`, or null when it has none. */
export async function selectorOfPlugin(db: Queryable, pluginId: number): Promise<number | null> {
  const rows = await db.select('SELECT id FROM plugin_pluginselector WHERE plugin_id = ?', [pluginId]);
  return rows[0] ? num(rows[0].id) : null;
}
