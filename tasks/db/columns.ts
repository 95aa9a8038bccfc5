/**
 * Reading a column of a row as Django's model fields read it. With this pool's options a cell is text, a number
 * or NULL (`Cell`); a column the SELECT does not name reads as NULL. A field with `null=True` reads NULL as null
 * (Python's None): `strOrNull`, `numOrNull`. A field with `null=False` holds no NULL, so `str` and `num` meet one
 * only where a LEFT JOIN found no row or an aggregate had nothing to add, and read it as the field's empty value.
 * Every row reader of tasks/ reads its cells through these, never through `String()` (which reads NULL as 'null')
 * or `Number()` (which reads a missing column as NaN); `fields` reads a whole row with them.
 */
import type { Cell, Row } from './database.js';

type Column = Cell | undefined;

/** A CharField/TextField with null=False: its text, '' for NULL. */
export const str = (c: Column): string => (c === null || c === undefined ? '' : String(c));

/** A field with null=True read as text (CharField, TextField, DateTimeField, DecimalField): its text, or null. */
export const strOrNull = (c: Column): string | null => (c === null || c === undefined ? null : String(c));

/** An integer or float column with null=False: its value, 0 for NULL (as `Number(null)` is). */
export const num = (c: Column): number => Number(c ?? 0);

/** An integer column or a ForeignKey with null=True: its value, or null. */
export const numOrNull = (c: Column): number | null => (c === null || c === undefined ? null : Number(c));

/** A BooleanField (MariaDB `tinyint(1)`): true only for 1. */
export const bool = (c: Column): boolean => Number(c) === 1;

/** A JSONField (text in MariaDB): decoded with `JSON.parse`, which throws on invalid JSON as `json.loads` does; NULL is null. */
export const json = (c: Column): unknown => (typeof c === 'string' ? (JSON.parse(c) as unknown) : c);

/** `user_profile_id` → `userProfileId`: a column's name as a row reader's field. */
type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;

/** What `fields` reads: each column under its camelCase name, typed by its reader. */
export type Fields<S extends Record<string, (c: Column) => unknown>> = {
  [K in keyof S & string as Camel<K>]: ReturnType<S[K]>;
};

const camel = (column: string) => column.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/**
 * Reads the columns `readers` names, each through its reader, into a field named as the column in camelCase:
 * `fields(r, { user_profile_id: num })` is `{ userProfileId: num(r.user_profile_id) }`.
 */
export function fields<const S extends Record<string, (c: Column) => unknown>>(r: Row, readers: S): Fields<S> {
  const out: Record<string, unknown> = {};
  for (const [column, read] of Object.entries(readers)) out[camel(column)] = read(r[column]);
  return out as Fields<S>;
}
