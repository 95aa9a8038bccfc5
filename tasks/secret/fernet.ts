/**
 * Fernet (the `cryptography` package's token format, which Smarter's `Secret.encrypted_value` holds): reading
 * a token with the key in `fernet_encryption_key`. Only decryption: the worker never writes a Secret.
 * Token = 0x80 | 8-byte timestamp | 16-byte IV | AES-128-CBC ciphertext | HMAC-SHA256 of all before it.
 */
import { createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto';
import { PythonException } from '../../lib/errors.js';

/** Smarter raises `SmarterValueError("Failed to decrypt the secret: …")`; so do we, naming the Secret. */
export class SecretError extends PythonException {
  constructor(secretName: string, detail: string) {
    super('SmarterValueError', 'smarter.common.exceptions', `Secret ${secretName}: Failed to decrypt the secret: ${detail}`);
  }
}

function b64url(text: string): Buffer {
  return Buffer.from(text.trim().replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** Throws a plain Error naming what is wrong; callers wrap it with the Secret's name. */
export function fernetDecrypt(key: string, token: Buffer | string): string {
  const k = b64url(key);
  if (k.length !== 32) throw new Error('the Fernet key must be 32 url-safe base64-encoded bytes');
  const t = b64url(Buffer.isBuffer(token) ? token.toString('ascii') : token);
  if (t.length < 1 + 8 + 16 + 16 + 32 || t[0] !== 0x80) throw new Error('not a Fernet token');
  const body = t.subarray(0, t.length - 32);
  const mac = createHmac('sha256', k.subarray(0, 16)).update(body).digest();
  if (!timingSafeEqual(mac, t.subarray(t.length - 32))) throw new Error('invalid token (wrong key, or altered)');
  const iv = t.subarray(9, 25);
  const decipher = createDecipheriv('aes-128-cbc', k.subarray(16), iv);
  return Buffer.concat([decipher.update(t.subarray(25, t.length - 32)), decipher.final()]).toString('utf8');
}
