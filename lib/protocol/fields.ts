/** Readers for loosely typed message fields: each says where the value sat when it is not what it should be. */
import { ProtocolError } from '../errors.js';
import { PyDateTime } from './values.js';

function invalid(where: string, expected: string, got: unknown): ProtocolError {
  let shown: string;
  try {
    shown = JSON.stringify(got) ?? String(got);
  } catch {
    shown = String(got);
  }
  return new ProtocolError('PROTOCOL_INVALID', where, `expected ${expected}, got ${shown.slice(0, 200)}`);
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** amqplib decodes some AMQP field types as `{'!': type, value}`; Celery never sends those for its own keys. */
function plain(v: unknown): unknown {
  if (isRecord(v) && '!' in v && 'value' in v) return v.value;
  return v;
}

export function str(v: unknown, where: string): string {
  const p = plain(v);
  if (typeof p === 'string') return p;
  if (Buffer.isBuffer(p)) return p.toString('utf8');
  throw invalid(where, 'a string', p);
}

export function optStr(v: unknown, where: string): string | null {
  return v === undefined || v === null ? null : str(v, where);
}

export function optInt(v: unknown, where: string): number | null {
  const p = plain(v);
  if (p === undefined || p === null) return null;
  if (typeof p === 'number' && Number.isInteger(p)) return p;
  if (typeof p === 'string' && /^-?\d+$/.test(p)) return Number(p);
  throw invalid(where, 'an integer', p);
}

export function optNum(v: unknown, where: string): number | null {
  const p = plain(v);
  if (p === undefined || p === null) return null;
  if (typeof p === 'number' && Number.isFinite(p)) return p;
  if (typeof p === 'string' && p.trim() !== '' && Number.isFinite(Number(p))) return Number(p);
  throw invalid(where, 'a number', p);
}

export function optBool(v: unknown, where: string): boolean | null {
  const p = plain(v);
  if (p === undefined || p === null) return null;
  if (typeof p === 'boolean') return p;
  throw invalid(where, 'a boolean', p);
}

/** eta/expires: an ISO string (naive = UTC), a kombu datetime marker, or an AMQP timestamp. */
export function optDateTime(v: unknown, where: string): PyDateTime | null {
  if (v === undefined || v === null) return null;
  if (v instanceof PyDateTime) return v;
  if (isRecord(v) && v['!'] === 'timestamp' && typeof v.value === 'number') {
    return PyDateTime.fromEpochMs(v.value * 1000);
  }
  if (typeof v === 'string') {
    try {
      return new PyDateTime(v);
    } catch {
      throw invalid(where, 'an ISO-8601 datetime', v);
    }
  }
  throw invalid(where, 'an ISO-8601 datetime', v);
}

export function list(v: unknown, where: string): unknown[] {
  if (Array.isArray(v)) return v;
  throw invalid(where, 'a list', v);
}

export function mapping(v: unknown, where: string): Record<string, unknown> {
  if (isRecord(v)) return v;
  throw invalid(where, 'a mapping', v);
}

export function timelimit(v: unknown, where: string): [number | null, number | null] {
  if (v === undefined || v === null) return [null, null];
  const arr = list(v, where);
  return [optNum(arr[0], `${where}[0]`), optNum(arr[1], `${where}[1]`)];
}
