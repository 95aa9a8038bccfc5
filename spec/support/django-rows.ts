/**
 * Fixture rows as `Model.objects.create(**values)` writes them: Django's Python defaults for what is not given,
 * both timestamps from MariaDB's clock unless given. Smarter's tables have no column defaults, so a fixture
 * that leaves a NOT NULL column out is refused, as Django would refuse it.
 */
import type { Queryable } from '../../tasks/db/database.js';
import { type DjangoTable, pythonDefaults } from '../../tasks/db/django-defaults.js';

export async function insertRow(db: Queryable, table: DjangoTable, values: Record<string, unknown>): Promise<number> {
  const row: Record<string, unknown> = { ...pythonDefaults(table), ...values };
  const cols = Object.keys(row);
  const stamps = ['created_at', 'updated_at'].filter((c) => !(c in row));
  const sql = `INSERT INTO \`${table}\` (${[...cols, ...stamps].map((c) => `\`${c}\``).join(', ')}) VALUES (${[
    ...cols.map(() => '?'),
    ...stamps.map(() => 'UTC_TIMESTAMP(6)'),
  ].join(', ')})`;
  return (await db.execute(sql, Object.values(row))).insertId;
}

/** The infrastructure ledger's rows (Smarter's InfrastructureResource), oldest first, in the columns a test compares. */
export async function ledgerRows(db: Queryable) {
  const rows = await db.select(
    'SELECT provider, service, resource_type, resource_name, resource_id, billable, status, destroyed_at FROM infrastructure_infrastructureresource ORDER BY id',
  );
  return rows.map((r) => ({
    provider: String(r.provider),
    service: String(r.service),
    resource_type: String(r.resource_type),
    resource_name: String(r.resource_name),
    resource_id: String(r.resource_id),
    billable: Number(r.billable),
    status: String(r.status),
    destroyed_at: r.destroyed_at,
  }));
}
