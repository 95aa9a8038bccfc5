/**
 * Exact decimals for money. Charges, prices and budgets are DECIMAL columns that Django reads as Python
 * `Decimal`; a JS number would round them, so amounts stay strings on the way in and out of MariaDB and any
 * arithmetic we do ourselves is on scaled BigInts. Rounding to a column's places is half-even, as Django's
 * `format_number` does (Python's default decimal context) before it writes a DecimalField.
 */
import { PyDecimal } from '../../lib/protocol/values.js';

export class DecimalError extends TypeError {
  readonly code = 'BAD_DECIMAL';
}

/** A decimal as `units / 10^scale`. */
export class Dec {
  private constructor(
    readonly units: bigint,
    readonly scale: number,
  ) {}

  static of(value: unknown): Dec {
    if (value instanceof Dec) return value;
    if (value instanceof PyDecimal) return Dec.parse(value.value);
    if (typeof value === 'bigint') return new Dec(value, 0);
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new DecimalError(`not a finite amount: ${value}`);
      // Python's Decimal(str(float)): the shortest text that reads back as the same float.
      return Dec.parse(String(value));
    }
    if (typeof value === 'string') return Dec.parse(value);
    throw new DecimalError(`not an amount: ${JSON.stringify(value)}`);
  }

  static parse(text: string): Dec {
    const m = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/.exec(text);
    if (!m || `${m[2] ?? ''}${m[3] ?? ''}` === '') throw new DecimalError(`not a decimal: ${JSON.stringify(text)}`);
    const [, sign, int = '', frac = '', exp = '0'] = m;
    let units = BigInt(`${int}${frac}` || '0');
    let scale = frac.length - Number(exp);
    if (scale < 0) {
      units *= 10n ** BigInt(-scale);
      scale = 0;
    }
    return new Dec(sign === '-' ? -units : units, scale);
  }

  static zero(): Dec {
    return new Dec(0n, 0);
  }

  private rescale(scale: number): bigint {
    return this.units * 10n ** BigInt(scale - this.scale);
  }

  add(other: Dec): Dec {
    const s = Math.max(this.scale, other.scale);
    return new Dec(this.rescale(s) + other.rescale(s), s);
  }

  mul(other: Dec): Dec {
    return new Dec(this.units * other.units, this.scale + other.scale);
  }

  /** Exact division by a power of ten. */
  shift(places: number): Dec {
    return new Dec(this.units, this.scale + places);
  }

  cmp(other: Dec): number {
    const s = Math.max(this.scale, other.scale);
    const a = this.rescale(s);
    const b = other.rescale(s);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  isZero(): boolean {
    return this.units === 0n;
  }

  /** Rounds half-even to `places` decimals. */
  quantize(places: number): Dec {
    if (places >= this.scale) return new Dec(this.rescale(places), places);
    const div = 10n ** BigInt(this.scale - places);
    const neg = this.units < 0n;
    const abs = neg ? -this.units : this.units;
    let q = abs / div;
    const r = abs % div;
    if (r * 2n > div || (r * 2n === div && q % 2n === 1n)) q += 1n;
    return new Dec(neg ? -q : q, places);
  }

  toString(): string {
    const neg = this.units < 0n;
    const digits = (neg ? -this.units : this.units).toString().padStart(this.scale + 1, '0');
    const int = digits.slice(0, digits.length - this.scale);
    const frac = this.scale > 0 ? `.${digits.slice(digits.length - this.scale)}` : '';
    return `${neg ? '-' : ''}${int}${frac}`;
  }
}
