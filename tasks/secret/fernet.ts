/**
 * Fernet (the `cryptography` package's token format, which Smarter's `Secret.encrypted_value` holds), with the key
 * in `fernet_encryption_key`: reading a token, and making one as `Fernet(key).encrypt()` does (for the Secrets
 * the worker creates as Smarter does, e.g. an LLMHost's generated API key).
 * Token = 0x80 | 8-byte timestamp | 16-byte IV | AES-128-CBC ciphertext | HMAC-SHA256 of all before it, in
 * url-safe base64 with its padding. The key's first 16 bytes sign, the last 16 encrypt.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { PythonException } from '../../lib/errors.js';

/** Smarter raises `SmarterValueError("Failed to decrypt the secret: …")`; so do we, naming the Secret. */
export class SecretError extends PythonException {
  constructor(secretName: string, detail: string) {
    super(
      'SmarterValueError',
      'smarter.common.exceptions',
      `Secret ${secretName}: Failed to decrypt the secret: ${detail}`,
    );
  }
}

function b64url(text: string): Buffer {
  return Buffer.from(text.trim().replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

function signingAndEncryptionKeys(key: string): { signing: Buffer; encryption: Buffer } {
  const k = b64url(key);
  if (k.length !== 32) throw new Error('the Fernet key must be 32 url-safe base64-encoded bytes');
  return { signing: k.subarray(0, 16), encryption: k.subarray(16) };
}

/** `Fernet(key).encrypt(plaintext.encode())`, decoded: the token as text. `at` and `iv` are for tests. */
export function fernetEncrypt(key: string, plaintext: string, options: { at?: Date; iv?: Buffer } = {}): string {
  const { signing, encryption } = signingAndEncryptionKeys(key);
  const iv = options.iv ?? randomBytes(16);
  const header = Buffer.alloc(9);
  header[0] = 0x80;
  header.writeBigUInt64BE(BigInt(Math.floor((options.at ?? new Date()).getTime() / 1000)), 1);
  const cipher = createCipheriv('aes-128-cbc', encryption, iv);
  const body = Buffer.concat([header, iv, cipher.update(plaintext, 'utf8'), cipher.final()]);
  const token = Buffer.concat([body, createHmac('sha256', signing).update(body).digest()]);
  return token.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

/** Throws a plain Error naming what is wrong; callers wrap it with the Secret's name. */
export function fernetDecrypt(key: string, token: Buffer | string): string {
  const { signing, encryption } = signingAndEncryptionKeys(key);
  const t = b64url(Buffer.isBuffer(token) ? token.toString('ascii') : token);
  if (t.length < 1 + 8 + 16 + 16 + 32 || t[0] !== 0x80) throw new Error('not a Fernet token');
  const body = t.subarray(0, t.length - 32);
  const mac = createHmac('sha256', signing).update(body).digest();
  if (!timingSafeEqual(mac, t.subarray(t.length - 32))) throw new Error('invalid token (wrong key, or altered)');
  const iv = t.subarray(9, 25);
  const decipher = createDecipheriv('aes-128-cbc', encryption, iv);
  return Buffer.concat([decipher.update(t.subarray(25, t.length - 32)), decipher.final()]).toString('utf8');
}
