/**
 * Reading a column of a row as Django's model fields read it. With this pool's options a cell is text, a number
 * or NULL (`Cell`); a column the SELECT does not name reads as NULL.
 */
import type { Cell } from './database.js';

type Column = Cell | undefined;

/** A CharField/TextField: its text, '' for NULL. */
export const str = (c: Column): string => (c === null || c === undefined ? '' : String(c));

/** An integer or float column: its value, 0 for NULL (as `Number(null)` is). */
export const num = (c: Column): number => Number(c ?? 0);

/** A BooleanField (MariaDB `tinyint(1)`): true only for 1. */
export const bool = (c: Column): boolean => Number(c) === 1;

/** A JSONField (text in MariaDB): decoded with `JSON.parse`, which throws on invalid JSON as `json.loads` does; NULL is null. */
export const json = (c: Column): unknown => (typeof c === 'string' ? (JSON.parse(c) as unknown) : c);
