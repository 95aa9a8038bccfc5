/**
 * Header values typed for py-amqp. amqplib guesses a tag from each JS number and picks `b` or `s` for small
 * integers, which py-amqp misreads (`s` as a short string, `b` as unsigned): a `clock` of 200 corrupts the
 * whole header table on the Python side. Every integer is therefore sent as `I` (int32), or `l` beyond it.
 * A value that arrived as a float (`d`/`f`, remembered by the decoder, see field-types.ts) goes back as a
 * float even when it is integral (`3.0`, `1e20`); an integral number beyond int64 can only be a double.
 */
import { fieldTypesOf } from '../../protocol/field-types.js';

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_LIMIT = 2 ** 63;

function isTyped(v: object): boolean {
  return Object.hasOwn(v, '!');
}

export function toAmqpValue(v: unknown, wireType?: string): unknown {
  if (typeof v === 'number') {
    if (wireType === 'f') return { '!': 'float', value: v };
    if (wireType === 'd' || !Number.isInteger(v) || v >= INT64_LIMIT || v < -INT64_LIMIT) {
      return { '!': 'double', value: v };
    }
    return v >= INT32_MIN && v <= INT32_MAX ? { '!': 'int32', value: v } : { '!': 'int64', value: v };
  }
  if (typeof v === 'bigint') return { '!': 'int64', value: v };
  if (Array.isArray(v)) {
    const types = fieldTypesOf(v);
    return v.map((x, i) => toAmqpValue(x, types?.[String(i)]));
  }
  if (typeof v === 'object' && v !== null && !Buffer.isBuffer(v) && !isTyped(v)) {
    return toAmqpTable(v as Record<string, unknown>);
  }
  return v;
}

export function toAmqpTable(table: Record<string, unknown>): Record<string, unknown> {
  const types = fieldTypesOf(table);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(table)) if (v !== undefined) out[k] = toAmqpValue(v, types?.[k]);
  return out;
}
