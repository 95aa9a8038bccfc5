/**
 * How Smarter's Django settings read the environment, for every settings table under tasks/: `get_env(NAME)`
 * tries NAME, then SMARTER_NAME, and booleans are Python's `str2bool` words ("True"/"False" as Helm writes them).
 */
import { ParseError } from '../lib/config/settings.js';

export const both = (name: string): string[] => [name, `SMARTER_${name}`];

export function pyBool(t: string): boolean {
  if (/^(true|1|yes|on)$/i.test(t.trim())) return true;
  if (/^(false|0|no|off)$/i.test(t.trim())) return false;
  throw new ParseError('expected True or False');
}
