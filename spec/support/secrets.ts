/** Smarter's Secrets made as Smarter makes them: encrypted by Python's `cryptography` Fernet (Debian's python3). */
import { execFileSync } from 'node:child_process';
import type { Database } from '../../tasks/db/database.js';
import { insertRow } from './django-rows.js';

export function fernetKey(): string {
  return execFileSync(
    '/usr/bin/python3',
    ['-c', 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'],
    { encoding: 'utf8' },
  ).trim();
}

export function fernetEncrypt(key: string, value: string): string {
  return execFileSync(
    '/usr/bin/python3',
    [
      '-c',
      'import sys; from cryptography.fernet import Fernet; print(Fernet(sys.argv[1].encode()).encrypt(sys.argv[2].encode()).decode())',
      key,
      value,
    ],
    { encoding: 'utf8' },
  ).trim();
}

/** INSERTs a `secret_secret` row holding `value` under `key`; returns its id. */
export async function insertSecret(
  db: Database,
  profileId: number,
  key: string,
  value: string,
  name = `secret${Math.random().toString(36).slice(2, 8)}`,
): Promise<number> {
  return insertRow(db, 'secret_secret', {
    name,
    user_profile_id: profileId,
    encrypted_value: Buffer.from(fernetEncrypt(key, value), 'ascii'),
  });
}

/** What Python's `cryptography` reads back from a Fernet token (as Smarter's `Secret.get_secret()` would). */
export function fernetDecryptPython(key: string, token: string): string {
  return execFileSync(
    '/usr/bin/python3',
    [
      '-c',
      'import sys; from cryptography.fernet import Fernet; sys.stdout.write(Fernet(sys.argv[1].encode()).decrypt(sys.argv[2].encode()).decode())',
      key,
      token,
    ],
    { encoding: 'utf8' },
  );
}
