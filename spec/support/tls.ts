/**
 * A test's own certificate authority, made with openssl in a temporary directory: a CA, a server certificate
 * for 127.0.0.1 and localhost signed by it, and client certificates. Nothing is trusted by the system, so a
 * client verifies these only when it is given the CA file.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestCa {
  readonly dir: string;
  /** The CA's certificate (PEM): what a client trusts. */
  readonly caFile: string;
  /** Issues a certificate and key signed by this CA; for a server, `altNames` are its SANs (IP:…, DNS:…). */
  issue(name: string, o?: { altNames?: string[]; client?: boolean }): Promise<{ certFile: string; keyFile: string }>;
  remove(): void;
}

async function openssl(...args: string[]): Promise<void> {
  await run('openssl', args, { timeout: 60_000 });
}

export async function makeTestCa(label = 'test'): Promise<TestCa> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tls-${label}-`));
  const caKey = path.join(dir, 'ca.key');
  const caFile = path.join(dir, 'ca.pem');
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    caFile,
    '-days',
    '2',
    '-subj',
    `/CN=smarter-worker ${label} CA`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  let serial = 1;
  return {
    dir,
    caFile,
    async issue(name, o = {}) {
      const keyFile = path.join(dir, `${name}.key`);
      const csr = path.join(dir, `${name}.csr`);
      const certFile = path.join(dir, `${name}.pem`);
      const ext = path.join(dir, `${name}.ext`);
      await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', csr, '-subj', `/CN=${name}`);
      const lines = [
        'basicConstraints=CA:FALSE',
        `extendedKeyUsage=${o.client ? 'clientAuth' : 'serverAuth'}`,
        ...(o.altNames?.length ? [`subjectAltName=${o.altNames.join(',')}`] : []),
      ];
      fs.writeFileSync(ext, `${lines.join('\n')}\n`);
      await openssl(
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        caFile,
        '-CAkey',
        caKey,
        '-set_serial',
        String(serial++),
        '-out',
        certFile,
        '-days',
        '2',
        '-extfile',
        ext,
      );
      // RabbitMQ runs as the rabbitmq user and reads these files itself.
      for (const f of [dir, caFile, certFile, keyFile]) fs.chmodSync(f, f === dir ? 0o755 : 0o644);
      return { certFile, keyFile };
    },
    remove() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
