/**
 * Header values typed for py-amqp. amqplib guesses a tag from each JS number and picks `b` or `s` for small
 * integers, which py-amqp misreads (`s` as a short string, `b` as unsigned): a `clock` of 200 corrupts the
 * whole header table on the Python side. Every integer is therefore sent as `I` (int32), or `l` beyond it.
 */
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

function isTyped(v: object): boolean {
  return Object.hasOwn(v, '!');
}

export function toAmqpValue(v: unknown): unknown {
  if (typeof v === 'number' && Number.isInteger(v)) {
    return v >= INT32_MIN && v <= INT32_MAX ? { '!': 'int32', value: v } : { '!': 'int64', value: v };
  }
  if (Array.isArray(v)) return v.map(toAmqpValue);
  if (typeof v === 'object' && v !== null && !Buffer.isBuffer(v) && !isTyped(v)) {
    return toAmqpTable(v as Record<string, unknown>);
  }
  return v;
}

export function toAmqpTable(table: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(table)) if (v !== undefined) out[k] = toAmqpValue(v);
  return out;
}
