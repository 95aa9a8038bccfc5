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

/**
 * The columns of a provider that passes every check of Smarter's provider bank: a logo, verified contact and support
 * addresses, its pages at `origin` (website, terms, docs, privacy), terms accepted by `userId`, and `verified`.
 */
export const providerPassingEveryCheck = (origin: string, userId: number): Record<string, unknown> => ({
  status: 'verified',
  logo: 'logos/acme.svg',
  contact_email: 'ops@acme.example',
  contact_email_verified: '2026-01-01 00:00:00',
  support_email: 'help@acme.example',
  support_email_verified: '2026-01-01 00:00:00',
  website_url: `${origin}/site`,
  terms_of_service_url: `${origin}/tos`,
  docs_url: `${origin}/docs`,
  privacy_policy_url: `${origin}/privacy`,
  tos_accepted_at: '2026-01-01 00:00:00',
  tos_accepted_by_id: userId,
});
