/**
 * TLS as Celery configures it: `broker_use_ssl` (kombu's `ssl` for py-amqp: `ca_certs`, `certfile`, `keyfile`,
 * `cert_reqs`, `server_hostname`) and `redis_backend_use_ssl` (redis-py's `ssl_ca_certs`, `ssl_certfile`,
 * `ssl_keyfile`, `ssl_cert_reqs`, also accepted as query parameters of a `rediss://` URL, as Celery does).
 *
 * The server's certificate is verified unless `cert_reqs` is CERT_NONE: Python's CERT_OPTIONAL on a client
 * verifies a certificate the server always sends, so it means the same as CERT_REQUIRED here.
 */
import fs from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { ParseError } from './settings.js';

export type CertReqs = 'required' | 'optional' | 'none';

export interface TlsSettings {
  /** TLS asked for by the setting itself (Celery's `broker_use_ssl = True` or a dict); amqps:// and rediss:// ask by their scheme. */
  readonly enabled: boolean;
  readonly caFile: string | null;
  readonly certFile: string | null;
  readonly keyFile: string | null;
  readonly certReqs: CertReqs;
  /** Name checked against the certificate instead of the URL's host (kombu `server_hostname`). */
  readonly serverName: string | null;
}

export const DEFAULT_TLS: TlsSettings = Object.freeze({
  enabled: false,
  caFile: null,
  certFile: null,
  keyFile: null,
  certReqs: 'required',
  serverName: null,
});

const CERT_REQS: Readonly<Record<string, CertReqs>> = {
  cert_required: 'required',
  required: 'required',
  cert_optional: 'optional',
  optional: 'optional',
  cert_none: 'none',
  none: 'none',
};

export function parseCertReqs(v: unknown): CertReqs | undefined {
  if (typeof v === 'number') return (['none', 'optional', 'required'] as const)[v];
  if (typeof v !== 'string') return undefined;
  const key = v
    .trim()
    .toLowerCase()
    .replace(/^ssl\./, '');
  return Object.hasOwn(CERT_REQS, key) ? CERT_REQS[key] : undefined;
}

/** The names each setting takes; the redis form (`ssl_` prefix) is accepted for the broker too, as Celery's docs show it for Redis brokers. */
const KEYS = {
  ca: ['ca_certs', 'ssl_ca_certs'],
  cert: ['certfile', 'ssl_certfile'],
  key: ['keyfile', 'ssl_keyfile'],
  reqs: ['cert_reqs', 'ssl_cert_reqs'],
  server: ['server_hostname', 'ssl_server_hostname'],
} as const;

function readable(file: string): string | null {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? 'unreadable';
  }
}

/**
 * Reads Celery's `*_use_ssl` as text: `true`/`false`, or a JSON object of the keys above. Every problem
 * (an unknown key, a bad `cert_reqs`, a file that cannot be read) is reported in one message.
 */
export function parseTlsSetting(text: string): TlsSettings {
  const t = text.trim();
  if (/^(1|true|yes|on)$/i.test(t)) return { ...DEFAULT_TLS, enabled: true };
  if (/^(0|false|no|off|none|)$/i.test(t)) return DEFAULT_TLS;
  let v: unknown;
  try {
    v = JSON.parse(t);
  } catch {
    throw new ParseError(
      'expected true, false or a JSON object, e.g. {"ca_certs": "/etc/ssl/ca.pem", "certfile": "client.pem", "keyfile": "client.key", "cert_reqs": "CERT_REQUIRED"}',
    );
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ParseError('expected a JSON object');
  const o = v as Record<string, unknown>;
  const problems: string[] = [];
  const known: readonly string[] = Object.values(KEYS).flat();
  const unknown = Object.keys(o).filter((k) => !known.includes(k));
  if (unknown.length) problems.push(`unknown key(s) ${unknown.join(', ')} (known: ${known.join(', ')})`);
  const pick = (names: readonly string[]): unknown => names.map((n) => o[n]).find((x) => x !== undefined && x !== null);
  const file = (names: readonly string[]): string | null => {
    const f = pick(names);
    if (f === undefined) return null;
    if (typeof f !== 'string' || f === '') {
      problems.push(`${names[0]} must be a file path`);
      return null;
    }
    const why = readable(f);
    if (why) problems.push(`${names[0]} ${JSON.stringify(f)} cannot be read (${why})`);
    return f;
  };
  const caFile = file(KEYS.ca);
  const certFile = file(KEYS.cert);
  const keyFile = file(KEYS.key);
  if (keyFile && !certFile) problems.push('keyfile needs certfile (the client certificate)');
  const reqsText = pick(KEYS.reqs);
  const certReqs = reqsText === undefined ? 'required' : parseCertReqs(reqsText);
  if (certReqs === undefined) {
    problems.push(`cert_reqs must be CERT_REQUIRED, CERT_OPTIONAL or CERT_NONE, got ${JSON.stringify(reqsText)}`);
  }
  const server = pick(KEYS.server);
  if (server !== undefined && typeof server !== 'string') problems.push('server_hostname must be a string');
  if (problems.length) throw new ParseError(problems.join('; '));
  return {
    enabled: true,
    caFile,
    certFile,
    keyFile,
    certReqs: certReqs ?? 'required',
    serverName: typeof server === 'string' && server !== '' ? server : null,
  };
}

/**
 * Node's TLS options for a connection. Files are read on each connect, so a renewed certificate is used at
 * the next reconnect. Without a CA file the system's trusted CAs apply, as with Python's default context.
 */
export function tlsConnectOptions(s: TlsSettings): ConnectionOptions {
  const key = s.keyFile ?? s.certFile;
  return {
    rejectUnauthorized: s.certReqs !== 'none',
    ...(s.caFile ? { ca: fs.readFileSync(s.caFile) } : {}),
    ...(s.certFile ? { cert: fs.readFileSync(s.certFile) } : {}),
    ...(s.certFile && key ? { key: fs.readFileSync(key) } : {}),
    ...(s.serverName ? { servername: s.serverName } : {}),
  };
}

/** OpenSSL's verification failures, which Node reports by code: the server was refused, not unreachable. */
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * A sentence for an operator when a TLS connection failed on the certificate, naming what to set;
 * undefined for any other error (those are reported as they are).
 */
export function describeTlsFailure(err: unknown, setting: string): string | undefined {
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  // Not `instanceof Error`: errors from Node's internals may come from another realm (a test runner's).
  const message = (typeof e.message === 'string' ? e.message : String(err)).replace(/\s+/g, ' ').trim();
  if (typeof e.code === 'string' && UNTRUSTED.has(e.code)) {
    return `TLS: the server's certificate is not trusted (${e.code}: ${message}); give the CA that signed it as ca_certs in ${setting}, or cert_reqs CERT_NONE to skip verification (unsafe)`;
  }
  // OpenSSL's text is `…:ssl3_read_bytes:tlsv13 alert certificate required:…`: the alert is the part to show.
  const alert = /alert (handshake failure|certificate required|bad certificate|unknown ca|certificate unknown)/i.exec(
    message,
  )?.[1];
  if (alert) {
    return `TLS: the server refused this client's certificate or wants one (TLS alert: ${alert}); set certfile and keyfile in ${setting}`;
  }
  return undefined;
}

const URL_SSL_KEYS = ['ssl_cert_reqs', 'ssl_ca_certs', 'ssl_certfile', 'ssl_keyfile'] as const;

/**
 * A Redis URL as Celery's redis backend reads it: TLS when the scheme is rediss:// or the setting asks, with
 * `ssl_*` query parameters (URL-encoded file paths) over the setting's values; the URL comes back without
 * them. Throws ParseError naming every problem (redis:// with ssl parameters, as Celery refuses; a bad value).
 */
export function redisTls(url: string, setting: TlsSettings = DEFAULT_TLS): { url: string; tls: TlsSettings | null } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ParseError('not a valid URL');
  }
  const fromUrl: Record<string, string> = {};
  for (const k of URL_SSL_KEYS) {
    const v = u.searchParams.get(k);
    if (v !== null) fromUrl[k] = v;
    u.searchParams.delete(k);
  }
  const tlsScheme = u.protocol === 'rediss:';
  if (!tlsScheme && Object.keys(fromUrl).length > 0) {
    throw new ParseError('ssl_* parameters need a rediss:// URL (Celery refuses them on redis://)');
  }
  if (!tlsScheme && !setting.enabled) return { url, tls: null };
  const merged =
    Object.keys(fromUrl).length > 0 ? parseTlsSetting(JSON.stringify({ ...jsonOf(setting), ...fromUrl })) : setting;
  return { url: u.toString(), tls: { ...merged, enabled: true } };
}

function jsonOf(s: TlsSettings): Record<string, string> {
  return {
    ...(s.caFile ? { ssl_ca_certs: s.caFile } : {}),
    ...(s.certFile ? { ssl_certfile: s.certFile } : {}),
    ...(s.keyFile ? { ssl_keyfile: s.keyFile } : {}),
    ssl_cert_reqs: s.certReqs,
  };
}
