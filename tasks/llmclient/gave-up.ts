import { isGaveUp } from '../../lib/errors.js';
import type { Rescheduled } from '../../lib/registry/context.js';

/** Runs a `checkAgain`; out of attempts (GaveUpError) is `null`, so the task can record its failure. */
export async function orGaveUp(fn: () => Promise<Rescheduled>): Promise<Rescheduled | null> {
  try {
    return await fn();
  } catch (err) {
    if (isGaveUp(err)) return null;
    throw err;
  }
}
