/**
 * What the text of a worker setting means: the parsers of the settings that are more than a number, a flag or
 * a list (worker-settings.ts names the settings; lib/config/settings.ts reads them). Each throws a
 * `ParseError` that names what was expected.
 */
import { parseLogLevel, type LogLevel } from '../logger.js';
import { brokerKindOf, knownSchemes, schemeOf, splitBrokerUrls } from '../broker/schemes.js';
import type { Serializer } from '../protocol/content.js';
import { type ControlPolicy, parseControlPolicy } from '../control/policy.js';
import { type UnknownTaskPolicy, parseUnknownTaskPolicy } from '../worker/intake/forward.js';
import { ParseError, parsers, redactUrl } from '../config/settings.js';
import { parseRate } from '../worker/rate-limit.js';
import { redisTls } from '../config/tls.js';

/** A result backend URL (rpc://, redis://, rediss://); empty, `disabled` or `none`: no backend. */
export function backendUrl(t: string): string {
  const v = t.trim();
  if (v === '' || /^(disabled|none)$/i.test(v)) return '';
  if (!/^(rpc|redis|rediss):\/\//i.test(v)) throw new ParseError('expected rpc://, redis://, rediss:// or disabled');
  // Celery's ssl_* query parameters: checked now, so a bad one is a configuration error, not a failed store.
  if (/^rediss?:/i.test(v)) redisTls(v);
  return v;
}

/**
 * One broker URL, or Celery's failover list (`amqp://a;amqp://b`): every URL is checked and every problem
 * named (passwords hidden), all must be of one broker, and only RabbitMQ and sentinel:// take several (a
 * redis:// list would silently use its first).
 */
export function brokerUrl(t: string): string {
  const urls = splitBrokerUrls(t);
  if (urls.length === 0) throw new ParseError(`expected an ${knownSchemes()} URL`);
  const problems: string[] = [];
  // sentinel:// is Redis too, but a list of sentinels is what it is for.
  const families = new Set<string>();
  urls.forEach((u, i) => {
    const label = urls.length > 1 ? `URL ${i + 1} of ${urls.length} (${redactUrl(u)})` : `URL ${redactUrl(u)}`;
    const kind = brokerKindOf(u);
    if (kind === undefined) {
      problems.push(`${label}: expected an ${knownSchemes()} URL`);
      return;
    }
    families.add(schemeOf(u) === 'sentinel' ? 'sentinel' : kind);
    try {
      new URL(u);
    } catch {
      problems.push(`${label}: not a valid URL`);
    }
  });
  if (families.size > 1) problems.push('every URL of a failover list must be of the same broker');
  else if (urls.length > 1 && families.has('redis')) {
    problems.push('a redis:// broker takes one URL (several Redis servers are named with sentinel://)');
  }
  if (problems.length > 0) throw new ParseError(problems.join('; '));
  return urls.join(';');
}

/** Celery's `broker_transport_options` for kombu's Redis transport: the keys that mean something here. */
export interface RedisTransportOptions {
  visibilityTimeout: number;
  masterName: string | null;
  globalKeyprefix: string;
}

export function transportOptions(t: string): RedisTransportOptions {
  let v: unknown;
  try {
    v = t.trim() === '' ? {} : JSON.parse(t);
  } catch {
    throw new ParseError('expected a JSON object, e.g. {"visibility_timeout": 3600, "master_name": "mymaster"}');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ParseError('expected a JSON object');
  const o = v as Record<string, unknown>;
  const known = ['visibility_timeout', 'master_name', 'global_keyprefix'];
  const unknown = Object.keys(o).filter((k) => !known.includes(k));
  if (unknown.length) throw new ParseError(`unknown key(s) ${unknown.join(', ')} (known: ${known.join(', ')})`);
  const vt = o.visibility_timeout ?? 3600;
  if (typeof vt !== 'number' || !(vt > 0)) {
    throw new ParseError('visibility_timeout must be a positive number of seconds');
  }
  if (o.master_name !== undefined && typeof o.master_name !== 'string') {
    throw new ParseError('master_name must be a string');
  }
  if (o.global_keyprefix !== undefined && typeof o.global_keyprefix !== 'string') {
    throw new ParseError('global_keyprefix must be a string');
  }
  return { visibilityTimeout: vt, masterName: o.master_name ?? null, globalKeyprefix: o.global_keyprefix ?? '' };
}

/** Celery's `--autoscale MAX,MIN` (`AUTOSCALE` type: `10,3`; a single number is MAX with MIN 0). */
export function autoscaleRange(t: string): { max: number; min: number } | null {
  if (t.trim() === '') return null;
  const [maxText = '', minText = '0', extra] = t.split(',').map((x) => x.trim());
  const max = Number(maxText);
  const min = Number(minText);
  if (extra !== undefined || !Number.isInteger(max) || !Number.isInteger(min) || max < 1 || min < 0 || min > max) {
    throw new ParseError('expected MAX,MIN with 1 <= MAX and 0 <= MIN <= MAX, e.g. 10,3');
  }
  return { max, min };
}

/** A positive integer, or none (empty, 0, None: no limit). */
export function optPositiveInt(t: string): number | null {
  const v = t.trim();
  if (v === '' || v === '0' || /^(none|null)$/i.test(v)) return null;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new ParseError('expected a positive integer, or 0/None for no limit');
  return n;
}

/** A log level by Celery's names. */
export function logLevel(t: string): LogLevel {
  const l = parseLogLevel(t);
  if (!l) throw new ParseError('expected DEBUG, INFO, WARNING or ERROR');
  return l;
}

/** Celery's `accept_content`: the serializers taken; pickle never. */
export function accept(t: string): Serializer[] {
  const out: Serializer[] = [];
  for (const item of parsers.list(t)) {
    const s = item.replace(/^application\/(x-)?/, '');
    if (s === 'pickle' || s === 'python-serialize') {
      throw new ParseError("pickle is never accepted: it runs the sender's code");
    }
    if (s !== 'json' && s !== 'msgpack' && s !== 'yaml') {
      throw new ParseError(`unknown serializer ${JSON.stringify(item)}`);
    }
    out.push(s);
  }
  return out;
}

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1000,
  kb: 1000,
  kib: 1024,
  m: 1e6,
  mb: 1e6,
  mib: 1024 ** 2,
  g: 1e9,
  gb: 1e9,
  gib: 1024 ** 3,
};

/** A size in bytes: `8388608`, `8MiB`, `512KB`; 0 means no limit. */
export function byteSize(t: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(t);
  const unit = SIZE_UNITS[(m?.[2] ?? '').toLowerCase()];
  if (!m || unit === undefined) {
    throw new ParseError('expected a size in bytes, e.g. 8388608, 8MiB or 512KB (0 = no limit)');
  }
  const n = Math.round(Number(m[1]) * unit);
  if (!Number.isSafeInteger(n)) throw new ParseError('size too large');
  return n;
}

/** A positive number of seconds. */
export function positiveSeconds(t: string): number {
  const n = parsers.seconds(t);
  if (n <= 0) throw new ParseError('expected a positive number of seconds');
  return n;
}

/** A file mode mask in octal, as `umask` takes it: `022`. */
export function octalMask(t: string): number {
  if (!/^[0-7]{1,4}$/.test(t.trim())) throw new ParseError('expected an octal mask, e.g. 022');
  return parseInt(t.trim(), 8);
}

/** A rate limit as Celery writes it (`10/s`, `100/m`, `1000/h`), checked and kept as written; none: null. */
export function optRateLimit(t: string): string | null {
  const v = t.trim();
  if (v === '' || /^(none|null)$/i.test(v)) return null;
  try {
    parseRate(v);
  } catch (err) {
    throw new ParseError((err as Error).message);
  }
  return v;
}

/** Delay levels, comma-separated: 0 to 27, the levels of the broker's delay topology. */
export function delayLevels(t: string): number[] {
  return parsers.list(t).map((x) => {
    const n = Number(x);
    if (!Number.isInteger(n) || n < 0 || n > 27) {
      throw new ParseError(`expected delay levels from 0 to 27, got ${JSON.stringify(x)}`);
    }
    return n;
  });
}

/** An address for a server to bind: a host name or an IP address, no path. */
export function bindAddress(t: string): string {
  const v = t.trim();
  if (v === '' || /[\s/]/.test(v)) {
    throw new ParseError('expected an address to bind, e.g. 0.0.0.0, 127.0.0.1 or ::');
  }
  return v;
}

/** The remote-control commands obeyed (control/policy.ts), its errors as the settings' own. */
export function controlPolicy(t: string): ControlPolicy {
  try {
    return parseControlPolicy(t);
  } catch (err) {
    throw new ParseError((err as Error).message);
  }
}

/** What is done with an unknown task name (intake/forward.ts), its errors as the settings' own. */
export function unknownTaskPolicy(t: string): UnknownTaskPolicy {
  try {
    return parseUnknownTaskPolicy(t);
  } catch (err) {
    throw new ParseError((err as Error).message);
  }
}
