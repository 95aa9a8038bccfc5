/**
 * Publishes held at a shutdown (the broker had not taken them) are carried over to the next start through the
 * state db, as the revoked ids are: written at the end of the grace, sent again first thing, then cleared.
 * Without a state db each is logged as lost, by id, so that nothing disappears unsaid.
 */
import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { PublishHold } from './publish-hold.js';
import { loadHeld, saveHeld } from './state-db.js';

/** At start: the publishes the last shutdown wrote are sent again; removed from the file once all are sent. */
export function sendCarriedOver(hold: PublishHold, file: string | null, logger: Logger, stopped: () => boolean): void {
  if (!file) return;
  const held = loadHeld(file);
  if (held.length === 0) return;
  logger.info(`sending ${held.length} publish(es) held at the last shutdown (state db ${file})`, {
    held: held.length,
  });
  hold.carry(held);
  void hold.whenEmpty().then(() => {
    if (stopped()) return;
    try {
      saveHeld(file, []);
    } catch (err) {
      logger.warn(`could not clear the sent publishes from the state db ${file}`, {
        error: coerceError(err).message,
      });
    }
  });
}

/**
 * At shutdown: held publishes are waited for within what is left of the grace (`ms`), then written to the state
 * db to be sent at the next start; without one (or when it cannot be written) each is logged as lost.
 */
export async function carryOver(hold: PublishHold, file: string | null, logger: Logger, ms: number): Promise<void> {
  if (hold.size > 0) {
    logger.info(`waiting up to ${Math.max(0, ms)} ms for ${hold.size} held publish(es) to be sent`, {
      held: hold.size,
    });
    await hold.drained(ms);
  }
  hold.stop();
  const left = hold.list();
  if (file) {
    try {
      saveHeld(file, left);
      if (left.length > 0) {
        logger.warn(`wrote ${left.length} held publish(es) to the state db ${file}: they are sent at the next start`, {
          held: left.length,
          ids: left.map((p) => p.id),
        });
      }
      return;
    } catch (err) {
      if (left.length > 0) {
        logger.error(`could not write the held publishes to the state db ${file}`, {
          error: coerceError(err).message,
        });
      }
    }
  }
  for (const p of left) {
    logger.error(
      `lost ${p.what} of ${p.id}: the broker did not take it before shutdown, and no state db (--statedb) keeps it`,
      { id: p.id, what: p.what, lost: true },
    );
  }
}
