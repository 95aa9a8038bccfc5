/** Smarter's Secrets as the tasks read and create them (`smarter/apps/secret/models.py`). */
import type { Queryable } from '../db/database.js';
import { num, str } from '../db/columns.js';
import { NOW, insertModel } from '../db/django.js';
import { SecretError, fernetDecrypt, fernetEncrypt } from './fernet.js';

/** `SMARTER_ACCOUNT_NUMBER`: the Smarter admin's account, whose Secrets every user may read. */
export const SMARTER_ACCOUNT_NUMBER = '3141-5926-5359';

/** `Secret.get_secret(update_last_accessed=…)`: the value, or null when the Secret is gone or holds none. */
export async function readSecret(
  db: Queryable,
  key: string,
  id: number,
  updateLastAccessed: boolean,
): Promise<string | null> {
  const [row] = await db.select('SELECT name, encrypted_value FROM secret_secret WHERE id = ?', [id]);
  if (!row) return null;
  const name = str(row.name);
  const value = row.encrypted_value;
  if (value === null || value === undefined) return null;
  if (!key) throw new SecretError(name, 'FERNET_ENCRYPTION_KEY is not set on the worker');
  let text: string;
  try {
    text = fernetDecrypt(key, str(value));
  } catch (e) {
    throw new SecretError(name, (e as Error).message);
  }
  if (updateLastAccessed) await db.execute(`UPDATE secret_secret SET last_accessed = ${NOW} WHERE id = ?`, [id]);
  return text;
}

/** The id of the user profile's own Secret named `name`, or null. */
export async function ownSecretId(db: Queryable, userProfileId: number, name: string): Promise<number | null> {
  const [row] = await db.select('SELECT id FROM secret_secret WHERE user_profile_id = ? AND name = ?', [
    userProfileId,
    name,
  ]);
  return row ? num(row.id) : null;
}

/**
 * `Secret.objects.with_read_permission_for(user).filter(name=name).first()`, for the user of `userProfileId`:
 * over each of that user's profiles, every Secret to a superuser, else the profile's own, those of its account's
 * staff and superusers, and the Smarter account's. The lowest id when several match.
 */
export async function readableSecretId(db: Queryable, userProfileId: number, name: string): Promise<number | null> {
  const [row] = await db.select(
    `SELECT s.id FROM secret_secret s
       JOIN account_userprofile o ON o.id = s.user_profile_id
       JOIN auth_user ou ON ou.id = o.user_id
       JOIN account_account oa ON oa.id = o.account_id
      WHERE s.name = ? AND EXISTS (
        SELECT 1 FROM account_userprofile me JOIN account_userprofile r ON r.user_id = me.user_id JOIN auth_user ru ON ru.id = r.user_id
         WHERE me.id = ? AND (ru.is_superuser = 1 OR o.id = r.id OR (o.account_id = r.account_id AND (ou.is_staff = 1 OR ou.is_superuser = 1)) OR oa.account_number = ?))
      ORDER BY s.id LIMIT 1`,
    [name, userProfileId, SMARTER_ACCOUNT_NUMBER],
  );
  return row ? num(row.id) : null;
}

/**
 * `Secret(name=…, user_profile=…, description=…, encrypted_value=Secret.encrypt(value)).save()`: the row as
 * Django inserts it (every column, Django's Python defaults for the rest), the value Fernet-encrypted with
 * `key`. Returns its id.
 */
export async function createSecret(
  db: Queryable,
  key: string,
  s: { name: string; userProfileId: number; description: string; value: string },
): Promise<number> {
  if (!key) throw new SecretError(s.name, 'FERNET_ENCRYPTION_KEY is not set on the worker');
  return insertModel(db, 'secret_secret', {
    name: s.name,
    description: s.description,
    version: '1.0.0',
    annotations: '[]',
    last_accessed: null,
    expires_at: null,
    encrypted_value: Buffer.from(fernetEncrypt(key, s.value), 'ascii'),
    user_profile_id: s.userProfileId,
  });
}
