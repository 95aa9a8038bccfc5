/**
 * The ledger's table, `infrastructure_infrastructureresource` (Smarter's `InfrastructureResource`, migration 0001):
 * one row per resource the platform created, `active` until it is destroyed. The writes are the model's
 * `record_created` and `record_destroyed`, which the receivers of Smarter's infrastructure signals call.
 */
import type { Queryable, Row } from '../db/database.js';
import { NOW } from '../db/django.js';
import { bool, num, str } from '../db/columns.js';

export const TABLE = 'infrastructure_infrastructureresource';

export interface LedgerEntry {
  /** The infrastructure service that made the change, as Smarter's `InfrastructureServiceNames` name it. */
  service: 'dns' | 'certificates' | 'kubernetes';
  /** e.g. `dns.zone`, `dns.record`, `certificate`, `kubernetes.node`. */
  type: string;
  name: string;
  /** The provider's id; none is stored as '' (the column is NOT NULL, Smarter writes `resource_id or ""`). */
  id?: string | null;
  billable: boolean;
}

export interface ActiveRow {
  id: number;
  name: string;
  resourceId: string;
  billable: boolean;
}

const toActive = (r: Row): ActiveRow => ({
  id: num(r.id),
  name: str(r.resource_name),
  resourceId: str(r.resource_id),
  billable: bool(r.billable),
});

/** The active rows of a provider's resource type (the inventory reconciles them). */
export async function activeRows(db: Queryable, provider: string, type: string): Promise<ActiveRow[]> {
  const rows = await db.select(
    `SELECT id, resource_name, resource_id, billable FROM ${TABLE} WHERE provider = ? AND resource_type = ? AND status = 'active'`,
    [provider, type],
  );
  return rows.map(toActive);
}

async function activeRow(db: Queryable, provider: string, e: LedgerEntry): Promise<ActiveRow | null> {
  const [r] = await db.select(
    `SELECT id, resource_name, resource_id, billable FROM ${TABLE} WHERE provider = ? AND resource_type = ? AND resource_name = ? AND status = 'active' ORDER BY created_at DESC, id DESC LIMIT 1`,
    [provider, e.type, e.name],
  );
  return r ? toActive(r) : null;
}

/**
 * `InfrastructureResource.record_created`: a new active row, or the active row of the same resource given the new
 * id (if any) and billability. Returns whether it wrote anything: an active row that already says the same is
 * left as it is, so a moment that may or may not be a creation (a zone got or created) records it only once.
 */
export async function recordCreated(db: Queryable, provider: string, e: LedgerEntry): Promise<boolean> {
  const row = await activeRow(db, provider, e);
  if (row === null) {
    await db.execute(
      `INSERT INTO ${TABLE} (created_at, updated_at, provider, service, resource_type, resource_name, resource_id, billable, status, destroyed_at)
       VALUES (${NOW}, ${NOW}, ?, ?, ?, ?, ?, ?, 'active', NULL)`,
      [provider, e.service, e.type, e.name, e.id || '', e.billable ? 1 : 0],
    );
    return true;
  }
  const resourceId = e.id || row.resourceId;
  if (resourceId === row.resourceId && e.billable === row.billable) return false;
  await db.execute(`UPDATE ${TABLE} SET resource_id = ?, billable = ?, updated_at = ${NOW} WHERE id = ?`, [
    resourceId,
    e.billable ? 1 : 0,
    row.id,
  ]);
  return true;
}

/**
 * `InfrastructureResource.record_destroyed`: the active row marked destroyed, or, for a resource the ledger does
 * not know (created before it existed), a row recorded destroyed.
 */
export async function recordDestroyed(db: Queryable, provider: string, e: LedgerEntry): Promise<void> {
  const row = await activeRow(db, provider, e);
  if (row === null) {
    await db.execute(
      `INSERT INTO ${TABLE} (created_at, updated_at, provider, service, resource_type, resource_name, resource_id, billable, status, destroyed_at)
       VALUES (${NOW}, ${NOW}, ?, ?, ?, ?, ?, ?, 'destroyed', ${NOW})`,
      [provider, e.service, e.type, e.name, e.id || '', e.billable ? 1 : 0],
    );
    return;
  }
  await db.execute(
    `UPDATE ${TABLE} SET status = 'destroyed', destroyed_at = ${NOW}, updated_at = ${NOW} WHERE id = ?`,
    [row.id],
  );
}

/** The inventory's id update of an active row (Smarter's `row.save(update_fields=["resource_id", "updated_at"])`). */
export async function setResourceId(db: Queryable, rowId: number, resourceId: string): Promise<void> {
  await db.execute(`UPDATE ${TABLE} SET resource_id = ?, updated_at = ${NOW} WHERE id = ?`, [resourceId, rowId]);
}
