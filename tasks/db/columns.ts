/**
 * Reading a column of a row as Django's model fields read it. With this pool's options a cell is text, a number
 * or NULL (`Cell`); a column the SELECT does not name reads as NULL. A field with `null=True` reads NULL as null
 * (Python's None): `strOrNull`, `numOrNull`. A field with `null=False` holds no NULL, so `str` and `num` meet one
 * only where a LEFT JOIN found no row or an aggregate had nothing to add, and read it as the field's empty value.
 * Every row reader of tasks/ reads its cells through these, never through `String()` (which reads NULL as 'null')
 * or `Number()` (which reads a missing column as NaN).
 */
import type { Cell } from './database.js';

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
