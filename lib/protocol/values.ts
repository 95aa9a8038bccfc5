/**
 * JS values for the Python types kombu's JSON carries as `{"__type__", "__value__"}` markers. They keep the
 * exact text Python sent, so decoding then encoding gives back the same message: a JS `Date` would drop
 * microseconds and the UTC offset, and a JS number would round a Decimal.
 */

const DECIMAL_RE = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$|^[+-]?(Infinity|inf|NaN|sNaN)$/i;

/** Python `decimal.Decimal`, kept as its exact text. Do arithmetic with a decimal library, never a float. */
export class PyDecimal {
  constructor(readonly value: string) {
    if (!DECIMAL_RE.test(value)) throw new TypeError(`not a decimal: ${JSON.stringify(value)}`);
  }
  toString(): string {
    return this.value;
  }
  toJSON(): string {
    return this.value;
  }
}

const DATETIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6})\d*)?)?(Z|[+-]\d{2}:?\d{2}(?::?\d{2})?)?$/;

/** Python `datetime.datetime`: the ISO text, with microseconds and offset kept. A naive value reads as UTC. */
export class PyDateTime {
  /** Milliseconds since the epoch (microseconds are in `micros`). */
  readonly epochMs: number;
  /** Microseconds within the second, 0..999999. */
  readonly micros: number;
  /** Whether the text carried an offset; Celery reads a naive eta/expires as UTC. */
  readonly aware: boolean;

  constructor(readonly iso: string) {
    const m = DATETIME_RE.exec(iso);
    if (!m) throw new TypeError(`not an ISO-8601 datetime: ${JSON.stringify(iso)}`);
    const [, y, mo, d, h, mi, s, frac, tz] = m;
    const micros = frac ? Number(frac.padEnd(6, '0')) : 0;
    let offsetMin = 0;
    if (tz && tz !== 'Z') {
      const sign = tz.startsWith('-') ? -1 : 1;
      const digits = tz.slice(1).replace(/:/g, '');
      offsetMin = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4)));
    }
    const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0));
    if (Number.isNaN(utc)) throw new TypeError(`not a valid datetime: ${JSON.stringify(iso)}`);
    this.epochMs = utc - offsetMin * 60_000 + Math.floor(micros / 1000);
    this.micros = micros;
    this.aware = tz !== undefined;
  }

  toDate(): Date {
    return new Date(this.epochMs);
  }

  /** `datetime.isoformat()` of a UTC instant: microseconds only when non-zero, offset `+00:00`. */
  static fromEpochMs(ms: number, extraMicros = 0): PyDateTime {
    return new PyDateTime(isoformatUtc(ms, extraMicros));
  }

  toString(): string {
    return this.iso;
  }
  toJSON(): string {
    return this.iso;
  }
}

/** Python's `datetime.isoformat()` for a UTC instant, e.g. `2026-11-30T00:25:32.379698+00:00`. */
export function isoformatUtc(ms: number, extraMicros = 0): string {
  const d = new Date(Math.floor(ms));
  const base = d.toISOString().slice(0, 19);
  const micros = (d.getUTCMilliseconds() * 1000 + extraMicros) % 1_000_000;
  return micros === 0 ? `${base}+00:00` : `${base}.${String(micros).padStart(6, '0')}+00:00`;
}

/** Python `datetime.date`. */
export class PyDate {
  constructor(readonly iso: string) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(iso)) throw new TypeError(`not an ISO date: ${JSON.stringify(iso)}`);
  }
  toString(): string {
    return this.iso;
  }
  toJSON(): string {
    return this.iso;
  }
}

/** Python `datetime.time`. */
export class PyTime {
  constructor(readonly iso: string) {
    if (!/^\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([+-]\d{2}:\d{2})?$/.test(iso)) {
      throw new TypeError(`not an ISO time: ${JSON.stringify(iso)}`);
    }
  }
  toString(): string {
    return this.iso;
  }
  toJSON(): string {
    return this.iso;
  }
}

/** Python `uuid.UUID`; kombu sends `{"hex": "<32 hex digits>"}`. */
export class PyUUID {
  readonly hex: string;
  constructor(text: string) {
    const hex = text
      .replace(/^urn:uuid:/i, '')
      .replace(/[{}-]/g, '')
      .toLowerCase();
    if (!/^[0-9a-f]{32}$/.test(hex)) throw new TypeError(`not a UUID: ${JSON.stringify(text)}`);
    this.hex = hex;
  }
  toString(): string {
    const h = this.hex;
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  toJSON(): string {
    return this.toString();
  }
}
