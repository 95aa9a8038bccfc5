/** Reading one of Smarter's Secrets, as `Secret.get_secret(update_last_accessed=…)` does. */
import type { Queryable } from '../db/database.js';
import { NOW } from '../db/django.js';
import { SecretError, fernetDecrypt } from './fernet.js';

export async function readSecret(db: Queryable, key: string, id: number, updateLastAccessed: boolean): Promise<string | null> {
  const [row] = await db.select('SELECT name, encrypted_value FROM secret_secret WHERE id = ?', [id]);
  if (!row) return null;
  const name = String(row.name);
  const value = row.encrypted_value;
  if (value === null || value === undefined) return null;
  if (!key) throw new SecretError(name, 'FERNET_ENCRYPTION_KEY is not set on the worker');
  let text: string;
  try {
    text = fernetDecrypt(key, Buffer.isBuffer(value) ? value : String(value));
  } catch (e) {
    throw new SecretError(name, (e as Error).message);
  }
  if (updateLastAccessed) await db.execute(`UPDATE secret_secret SET last_accessed = ${NOW} WHERE id = ?`, [id]);
  return text;
}
