/**
 * kombu's JSON dialect (kombu ≥ 5.3): non-JSON Python values travel as `{"__type__": T, "__value__": V}`.
 * Decoding unwraps every object whose keys are exactly those two, as kombu's `object_hook` does; an unknown
 * `__type__` is a decode error, as in kombu. Encoding emits the markers for our value classes, `Date` and
 * binary buffers, so Python 5.3+ peers get real `Decimal`, `datetime`, `UUID` and `bytes` values back.
 */
import { PyDate, PyDateTime, PyDecimal, PyTime, PyUUID, isoformatUtc } from './values.js';

export class MarkerError extends Error {}

function unwrap(type: unknown, value: unknown): unknown {
  switch (type) {
    case 'datetime':
      if (typeof value === 'string') return new PyDateTime(value);
      break;
    case 'date':
      if (typeof value === 'string') return new PyDate(value);
      break;
    case 'time':
      if (typeof value === 'string') return new PyTime(value);
      break;
    case 'decimal':
      if (typeof value === 'string') return new PyDecimal(value);
      break;
    case 'uuid':
      if (typeof value === 'object' && value !== null && typeof (value as { hex?: unknown }).hex === 'string') {
        return new PyUUID((value as { hex: string }).hex);
      }
      if (typeof value === 'string') return new PyUUID(value);
      break;
    case 'bytes':
      if (typeof value === 'string') return Buffer.from(value, 'utf8');
      break;
    case 'base64':
      if (typeof value === 'string') return Buffer.from(value, 'base64');
      break;
    default:
      throw new MarkerError(`unsupported __type__ ${JSON.stringify(type)}`);
  }
  throw new MarkerError(`__type__ ${JSON.stringify(type)} with a malformed __value__`);
}

function isMarker(obj: Record<string, unknown>): boolean {
  const keys = Object.keys(obj);
  return keys.length === 2 && '__type__' in obj && '__value__' in obj;
}

/** Parses kombu JSON. Throws `SyntaxError` for bad JSON and `MarkerError` (or `TypeError`) for bad markers. */
export function parseKombuJson(text: string): unknown {
  // Most bodies carry no markers; the reviver costs a call per value, so only pay for it when needed.
  if (!text.includes('"__type__"')) return JSON.parse(text);
  return JSON.parse(text, (_key, value: unknown) => {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const obj = value as Record<string, unknown>;
      if (isMarker(obj)) return unwrap(obj.__type__, obj.__value__);
    }
    return value;
  });
}

function isUtf8(buf: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(buf);
    return true;
  } catch {
    return false;
  }
}

function toMarkers(value: unknown): unknown {
  if (value instanceof PyDecimal) return { __type__: 'decimal', __value__: value.value };
  if (value instanceof PyDateTime) return { __type__: 'datetime', __value__: value.iso };
  if (value instanceof Date) return { __type__: 'datetime', __value__: isoformatUtc(value.getTime()) };
  if (value instanceof PyDate) return { __type__: 'date', __value__: value.iso };
  if (value instanceof PyTime) return { __type__: 'time', __value__: value.iso };
  if (value instanceof PyUUID) return { __type__: 'uuid', __value__: { hex: value.hex } };
  if (value instanceof Uint8Array) {
    const buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    return isUtf8(buf)
      ? { __type__: 'bytes', __value__: buf.toString('utf8') }
      : { __type__: 'base64', __value__: buf.toString('base64') };
  }
  if (Array.isArray(value)) return value.map(toMarkers);
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined) out[k] = toMarkers(v);
    }
    return out;
  }
  return value;
}

/**
 * Serialises like kombu's `dumps`: Python's separators (`", "`, `": "`) and ASCII-only output, so the bytes
 * match what a Python producer would send for the same values.
 */
export function stringifyKombuJson(value: unknown): string {
  return dumpsPython(toMarkers(value));
}

/** Python's `json.dumps` with its defaults (separators `", "`/`": "`, `ensure_ascii`), for plain JSON values. */
export function dumpsPython(value: unknown): string {
  return asciiOnly(pyJson(value));
}

function pyJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
    return JSON.stringify(value);
  }
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pyJson).join(', ')}]`;
  if (typeof value === 'object') {
    const parts = Object.entries(value as Record<string, unknown>).map(
      ([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`,
    );
    return `{${parts.join(', ')}}`;
  }
  return 'null';
}

function asciiOnly(text: string): string {
  return text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
