/**
 * What Django would write: `created_at`/`updated_at` in UTC with microseconds, JSONField text as
 * `json.dumps(value, cls=DjangoJSONEncoder)` produces it, record locators as `TimestampedModel` derives them.
 */
import * as z from 'zod';
import { PyDate, PyDateTime, PyDecimal, PyTime, PyUUID } from '../../lib/protocol/values.js';
import { dumpsPython } from '../../lib/protocol/json.js';
import type { Queryable } from './database.js';

/** MariaDB's clock, in UTC with microseconds: one instant for both timestamps of a row. */
export const NOW = 'UTC_TIMESTAMP(6)';

/** Django's `DjangoJSONEncoder`: Decimal and UUID as strings, datetimes in ISO with milliseconds and `Z`. */
export function djangoJson(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return dumpsPython(toDjango(value));
}

function toDjango(value: unknown): unknown {
  if (value instanceof PyDecimal || value instanceof PyUUID) return value.toString();
  if (value instanceof PyDateTime) {
    let r = value.iso.replace(' ', 'T');
    r = r.replace(/(\.\d{3})\d{3}/, '$1');
    return r.endsWith('+00:00') ? `${r.slice(0, -6)}Z` : r;
  }
  if (value instanceof PyDate || value instanceof PyTime) return value.toString();
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (Array.isArray(value)) return value.map(toDjango);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toDjango(v)]));
  }
  return value;
}

/**
 * INSERT TimestampedModel rows (values in `columns` order), all in one statement, with both timestamps from
 * MariaDB's clock; returns the first row's id.
 */
export async function insertModels(
  db: Queryable,
  table: string,
  columns: readonly string[],
  rows: ReadonlyArray<readonly unknown[]>,
): Promise<number> {
  const one = `(${columns.map(() => '?').join(', ')}, ${NOW}, ${NOW})`;
  const sql = `INSERT INTO \`${table}\` (${columns.map((c) => `\`${c}\``).join(', ')}, created_at, updated_at) VALUES ${rows.map(() => one).join(', ')}`;
  const res = await db.execute(sql, rows.flat());
  return res.insertId;
}

/** INSERT one TimestampedModel row; returns its id. */
export async function insertModel(db: Queryable, table: string, row: Record<string, unknown>): Promise<number> {
  return insertModels(db, table, Object.keys(row), [Object.values(row)]);
}

/** `TimestampedModel.record_locator`: `<model name lower>-r<urlsafe base64 of (id + 1000000)>x`. */
export function recordLocator(modelName: string, id: number | string): string {
  const encoded = Buffer.from(String(Number(id) + 1_000_000)).toString('base64url');
  return `${modelName.toLowerCase()}-r${encoded}x`;
}

export async function exists(db: Queryable, table: string, id: unknown): Promise<boolean> {
  const rows = await db.select(`SELECT 1 FROM \`${table}\` WHERE id = ? LIMIT 1`, [id]);
  return rows.length > 0;
}

/** Django's key of the chat session in request data (`SMARTER_CHAT_SESSION_KEY_NAME`). */
export const SESSION_KEY_NAME = 'session_key';

/** A primary key as Python callers send it: an int, or its digits (Django's `get(id=…)` takes both). */
export const pk = () =>
  z
    .union([z.number().int().positive(), z.string().regex(/^\d+$/, 'expected an integer id')])
    .transform((v) => Number(v));
