/**
 * Smarter's Django tables (`schema.sql`): what compose.yaml loads into a fresh MariaDB, what `npm run system`
 * creates on a machine without a `smarter` database, and what the tests create per file. One file for all
 * three; the build copies it next to this module.
 */
import { readFileSync } from 'node:fs';

export const SCHEMA_FILE = new URL('./schema.sql', import.meta.url);

export function smarterSchema(): string {
  return readFileSync(SCHEMA_FILE, 'utf8');
}
