/**
 * The worker's Fernet against Python's `cryptography` (what Smarter's `Secret.encrypt` and `get_secret` use,
 * smarter/apps/secret/models.py): the same key, time and IV give the very same token, and each reads the other's.
 */
import { execFileSync } from 'node:child_process';
import { fernetDecrypt, fernetEncrypt } from '../../tasks/secret/fernet.js';
import { fernetDecryptPython, fernetEncrypt as pythonEncrypt, fernetKey } from '../support/secrets.js';

const key = fernetKey();

test('a token made with a given time and IV is byte for byte the one cryptography makes (Fernet._encrypt_from_parts)', () => {
  const iv = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
  const at = new Date('2026-12-01T20:00:00Z');
  const python = execFileSync(
    '/usr/bin/python3',
    [
      '-c',
      'import sys; from cryptography.fernet import Fernet; sys.stdout.write(Fernet(sys.argv[1].encode())._encrypt_from_parts("clé secrète".encode(), int(sys.argv[2]), bytes.fromhex(sys.argv[3])).decode())',
      key,
      String(at.getTime() / 1000),
      iv.toString('hex'),
    ],
    { encoding: 'utf8' },
  );
  expect(fernetEncrypt(key, 'clé secrète', { at, iv })).toBe(python);
});

test("Python decrypts the worker's tokens, and the worker Python's; a random IV each time", () => {
  const a = fernetEncrypt(key, 'hf_abc');
  expect(fernetDecryptPython(key, a)).toBe('hf_abc');
  expect(fernetEncrypt(key, 'hf_abc')).not.toBe(a);
  expect(fernetDecrypt(key, pythonEncrypt(key, 'from python'))).toBe('from python');
  expect(() => fernetEncrypt('short', 'x')).toThrow(/32 url-safe base64-encoded bytes/);
});
