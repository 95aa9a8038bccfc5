/** Provider and ProviderModel rows as the test bank reads them; status strings are `ProviderStatus` values. */
import type { Queryable, Row } from '../db/database.js';
import { bool, fields, num, numOrNull, str, strOrNull } from '../db/columns.js';
import { NOW } from '../db/django.js';

export const PROVIDER_STATUS = {
  UNVERIFIED: 'unverified',
  VERIFYING: 'verifying',
  FAILED: 'failed',
  VERIFIED: 'verified',
  SUSPENDED: 'suspended',
  DEPRECATED: 'deprecated',
} as const;

export interface ProviderRow {
  id: number;
  name: string;
  status: string;
  isActive: boolean;
  isDeprecated: boolean;
  isSuspended: boolean;
  isFlagged: boolean;
  baseUrl: string | null;
  apiKeyId: number | null;
  connectivityTestPath: string | null;
  logo: string | null;
  websiteUrl: string | null;
  contactEmail: string | null;
  contactEmailVerified: string | null;
  supportEmail: string | null;
  supportEmailVerified: string | null;
  docsUrl: string | null;
  termsOfServiceUrl: string | null;
  privacyPolicyUrl: string | null;
  tosAcceptedAt: string | null;
  tosAcceptedById: number | null;
}

const PROVIDER_FIELDS = {
  id: num,
  name: str,
  status: str,
  is_active: bool,
  is_deprecated: bool,
  is_suspended: bool,
  is_flagged: bool,
  base_url: strOrNull,
  api_key_id: numOrNull,
  connectivity_test_path: strOrNull,
  logo: strOrNull,
  website_url: strOrNull,
  contact_email: strOrNull,
  contact_email_verified: strOrNull,
  support_email: strOrNull,
  support_email_verified: strOrNull,
  docs_url: strOrNull,
  terms_of_service_url: strOrNull,
  privacy_policy_url: strOrNull,
  tos_accepted_at: strOrNull,
  tos_accepted_by_id: numOrNull,
};

function provider(r: Row): ProviderRow {
  const row = fields(r, PROVIDER_FIELDS);
  return { ...row, baseUrl: row.baseUrl || null };
}

export async function loadProvider(db: Queryable, id: number): Promise<ProviderRow | null> {
  const [r] = await db.select('SELECT * FROM provider_provider WHERE id = ?', [id]);
  return r ? provider(r) : null;
}

export const CAPABILITIES = [
  'streaming',
  'tools',
  'text_input',
  'image_input',
  'audio_input',
  'fine_tuning',
  'search',
  'code_interpreter',
  'image_generation',
  'audio_generation',
  'text_generation',
  'translation',
  'summarization',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

export interface ProviderModelRow {
  id: number;
  name: string;
  providerId: number;
  supports: Record<Capability, boolean>;
}

export async function loadProviderModel(db: Queryable, id: number): Promise<ProviderModelRow | null> {
  const [r] = await db.select('SELECT * FROM provider_providermodel WHERE id = ?', [id]);
  if (!r) return null;
  const supports = Object.fromEntries(CAPABILITIES.map((c) => [c, bool(r[`supports_${c}`])])) as Record<
    Capability,
    boolean
  >;
  return { id: num(r.id), name: str(r.name), providerId: num(r.provider_id), supports };
}

/** Smarter's `Provider.tos_accepted` and `can_activate`. */
export const tosAccepted = (p: ProviderRow) => p.tosAcceptedAt !== null && p.tosAcceptedById !== null;
export const canActivate = (p: ProviderRow) =>
  p.status === PROVIDER_STATUS.VERIFIED && !p.isDeprecated && !p.isSuspended && !p.isFlagged && tosAccepted(p);

/*
 * The verification rows (`provider_providerverification`, `provider_providermodelverification`). Smarter never
 * fills `error_message`; we write the failed call's message there.
 */
/** `provider/const.py`: ten calendar days. */
export const VERIFICATION_LIFETIME_SECONDS = 60 * 60 * 24 * 10;

export interface VerificationTable {
  table: 'provider_providerverification' | 'provider_providermodelverification';
  ownerColumn: 'provider_id' | 'provider_model_id';
}

export const PROVIDER_VERIFICATIONS: VerificationTable = {
  table: 'provider_providerverification',
  ownerColumn: 'provider_id',
};
export const MODEL_VERIFICATIONS: VerificationTable = {
  table: 'provider_providermodelverification',
  ownerColumn: 'provider_model_id',
};

export interface Verification {
  id: number;
  valid: boolean;
}

export async function getVerification(
  db: Queryable,
  t: VerificationTable,
  ownerId: number,
  type: string,
): Promise<Verification> {
  const find = () =>
    db.select(
      `SELECT id, (is_successful = 1 AND updated_at > ${NOW} - INTERVAL ? SECOND) AS valid FROM ${t.table} WHERE ${t.ownerColumn} = ? AND verification_type = ? ORDER BY id LIMIT 1`,
      [VERIFICATION_LIFETIME_SECONDS, ownerId, type],
    );
  let [row] = await find();
  if (!row) {
    await db.execute(
      `INSERT INTO ${t.table} (${t.ownerColumn}, verification_type, is_successful, created_at, updated_at) VALUES (?, ?, 0, ${NOW}, ${NOW})`,
      [ownerId, type],
    );
    [row] = await find();
  }
  return { id: num(row?.id), valid: bool(row?.valid) };
}

export async function setVerification(
  db: Queryable,
  t: VerificationTable,
  id: number,
  ok: boolean,
  error: string | null,
): Promise<void> {
  await db.execute(`UPDATE ${t.table} SET is_successful = ?, error_message = ?, updated_at = ${NOW} WHERE id = ?`, [
    ok ? 1 : 0,
    ok ? null : error,
    id,
  ]);
}

/**
 * `activate()` saves the whole row (so updated_at moves) only when it was inactive; then status and is_verified by
 * update_fields. SET runs left to right: updated_at reads is_active before it changes.
 */
export async function markProviderVerified(db: Queryable, id: number): Promise<void> {
  await db.execute(
    `UPDATE provider_provider SET updated_at = IF(is_active = 1, updated_at, ${NOW}), status = ?, is_verified = 1, is_active = 1 WHERE id = ?`,
    [PROVIDER_STATUS.VERIFIED, id],
  );
}

export async function markProviderFailed(db: Queryable, id: number): Promise<void> {
  await db.execute('UPDATE provider_provider SET status = ?, is_verified = 0, is_active = 0 WHERE id = ?', [
    PROVIDER_STATUS.FAILED,
    id,
  ]);
}

export async function setProviderModelActive(db: Queryable, id: number, active: boolean): Promise<void> {
  await db.execute('UPDATE provider_providermodel SET is_active = ? WHERE id = ?', [active ? 1 : 0, id]);
}
