/**
 * The verification rows (`provider_providerverification`, `provider_providermodelverification`): Smarter's
 * `get_or_create(owner, verification_type)`, `is_valid` (successful and updated less than
 * VERIFICATION_LIFETIME ago: a valid check is not run again) and `set_*_verification` (save, so `updated_at`
 * moves). Smarter never fills `error_message`; we write the failed call's message there.
 */
import type { Queryable } from '../db/database.js';
import { NOW } from '../db/django.js';

/** `provider/const.py`: ten calendar days. */
export const VERIFICATION_LIFETIME_SECONDS = 60 * 60 * 24 * 10;

export interface VerificationTable {
  table: 'provider_providerverification' | 'provider_providermodelverification';
  ownerColumn: 'provider_id' | 'provider_model_id';
}

export const PROVIDER_VERIFICATIONS: VerificationTable = { table: 'provider_providerverification', ownerColumn: 'provider_id' };
export const MODEL_VERIFICATIONS: VerificationTable = { table: 'provider_providermodelverification', ownerColumn: 'provider_model_id' };

export interface Verification {
  id: number;
  valid: boolean;
}

export async function getVerification(db: Queryable, t: VerificationTable, ownerId: number, type: string): Promise<Verification> {
  const find = () =>
    db.select(
      `SELECT id, (is_successful = 1 AND updated_at > ${NOW} - INTERVAL ? SECOND) AS valid FROM ${t.table} WHERE ${t.ownerColumn} = ? AND verification_type = ? ORDER BY id LIMIT 1`,
      [VERIFICATION_LIFETIME_SECONDS, ownerId, type],
    );
  let [row] = await find();
  if (!row) {
    await db.execute(`INSERT INTO ${t.table} (${t.ownerColumn}, verification_type, is_successful, created_at, updated_at) VALUES (?, ?, 0, ${NOW}, ${NOW})`, [ownerId, type]);
    [row] = await find();
  }
  return { id: Number(row?.id), valid: Number(row?.valid) === 1 };
}

export async function setVerification(db: Queryable, t: VerificationTable, id: number, ok: boolean, error: string | null): Promise<void> {
  await db.execute(`UPDATE ${t.table} SET is_successful = ?, error_message = ?, updated_at = ${NOW} WHERE id = ?`, [ok ? 1 : 0, ok ? null : error, id]);
}

/**
 * One check as Smarter writes each: skip when still valid, else run it, record the outcome, return it. A
 * check's own failure (an LLM error, a page that is down) is its `false`; anything the check lets through
 * (Smarter's configuration errors, the database) fails the task, and autoretry takes it.
 */
export async function check(
  db: Queryable,
  t: VerificationTable,
  ownerId: number,
  type: string,
  run: () => Promise<{ ok: boolean; error?: string }>,
  opts: { skipWhenValid?: boolean } = {},
): Promise<boolean> {
  const v = await getVerification(db, t, ownerId, type);
  if (v.valid && opts.skipWhenValid !== false) return true;
  const { ok, error } = await run();
  await setVerification(db, t, v.id, ok, error ?? null);
  return ok;
}
