/**
 * Python's `repr` of decoded values, for the `argsrepr`/`kwargsrepr` headers and the `result` field of
 * `task-succeeded` events that Flower and `celery events` display. Celery truncates at 1024 characters
 * (`saferepr(x, 1024)`).
 */
import { PyDate, PyDateTime, PyDecimal, PyTime, PyUUID } from './values.js';

function pyStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

function pyNumber(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  return String(n);
}

export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return pyNumber(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return pyStr(value);
  if (value instanceof PyDecimal) return `Decimal('${value.value}')`;
  if (value instanceof PyDateTime) return `datetime.datetime.fromisoformat('${value.iso}')`;
  if (value instanceof Date) return `datetime.datetime.fromisoformat('${value.toISOString()}')`;
  if (value instanceof PyDate) return `datetime.date.fromisoformat('${value.iso}')`;
  if (value instanceof PyTime) return `datetime.time.fromisoformat('${value.iso}')`;
  if (value instanceof PyUUID) return `UUID('${value.toString()}')`;
  if (value instanceof Uint8Array) return `b${pyStr(Buffer.from(value).toString('latin1'))}`;
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${pyStr(k)}: ${pyRepr(v)}`);
    return `{${entries.join(', ')}}`;
  }
  return pyStr(typeof value === 'symbol' ? value.toString() : typeof value);
}

/** The repr of an args tuple: `(1,)`, `(1, 2)`, `()`. */
export function pyTupleRepr(values: readonly unknown[]): string {
  if (values.length === 1) return `(${pyRepr(values[0])},)`;
  return `(${values.map(pyRepr).join(', ')})`;
}

export function truncate(text: string, max = 1024): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}
