/**
 * What a decoded AMQP field table remembers of its wire types, so a message passed on (a dead-letter copy,
 * a parked ETA) is encoded back as it came: JavaScript has one number type, and a float header whose value
 * is integral (`3.0`, `1e20`) would otherwise go out as an integer. Kept on a non-enumerable symbol so
 * that `Object.entries`, JSON and test equality see the plain values only.
 */
export const FIELD_TYPES: unique symbol = Symbol('amqp field types');

/** Set on a table whose decoding stopped at a value of an unknown type: what was not read, and where. */
export const FIELD_ERROR: unique symbol = Symbol('amqp field error');

export interface FieldError {
  key: string;
  tag: string;
}

type Tagged = { [FIELD_TYPES]?: Record<string, string>; [FIELD_ERROR]?: FieldError };

export function fieldTypesOf(v: object): Record<string, string> | undefined {
  return (v as Tagged)[FIELD_TYPES];
}

export function fieldErrorOf(v: object): FieldError | undefined {
  return (v as Tagged)[FIELD_ERROR];
}

export function setFieldTypes(v: object, types: Record<string, string>): void {
  Object.defineProperty(v, FIELD_TYPES, { value: types, enumerable: false });
}

export function setFieldError(v: object, error: FieldError): void {
  Object.defineProperty(v, FIELD_ERROR, { value: error, enumerable: false });
}

/** `{ ...base, ...extra }` that keeps what `base` remembers of its wire types. */
export function extendTable(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base, ...extra };
  const types = fieldTypesOf(base);
  if (types) {
    const kept: Record<string, string> = {};
    for (const [k, t] of Object.entries(types)) if (!(k in extra)) kept[k] = t;
    setFieldTypes(out, kept);
  }
  return out;
}
