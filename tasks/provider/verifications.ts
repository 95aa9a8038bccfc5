/**
 * One verification as Smarter runs it: `get_or_create(owner, verification_type)`, `is_valid` (successful and
 * updated less than VERIFICATION_LIFETIME ago: a valid check is not run again) and `set_*_verification` (save, so
 * `updated_at` moves); the rows are read and written in rows.ts.
 */
import type { Queryable } from '../db/database.js';
import { type VerificationTable, getVerification, setVerification } from './rows.js';

export { MODEL_VERIFICATIONS, PROVIDER_VERIFICATIONS } from './rows.js';

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
