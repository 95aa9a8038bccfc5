/** What a Redis broker is given, its defaults, and what it does itself (its capabilities) under them. */
import type { TlsSettings } from '../../config/tls.js';
import type { Logger } from '../../logger.js';
import type { BrokerCapabilities } from '../broker.js';

export interface RedisBrokerOptions {
  url: string;
  logger: Logger;
  /** kombu `visibility_timeout` (s): an unacked message older than this is restored to its queue. */
  visibilityTimeoutSeconds?: number;
  /** Waits up to this long are sent to the queue with their ETA instead of the delayed set (see DEFAULT_HOLD_MAX_MS). */
  holdMaxMs?: number;
  /** Lease of locks taken with `lock()` (Beat's), renewed every third of it. */
  lockLeaseMs?: number;
  /** kombu `master_name`, for sentinel:// URLs. */
  masterName?: string;
  /** kombu `global_keyprefix`. */
  keyPrefix?: string;
  /** Celery's `broker_use_ssl`, for rediss://. */
  tls?: TlsSettings;
  /** How often to look for messages past the visibility timeout, and for due delayed messages. */
  restoreIntervalMs?: number;
  schedulerIntervalMs?: number;
  /** Exchanges that are fanout even before a topology declares them (Celery's, as kombu's Redis sees them). */
  fanoutExchanges?: readonly string[];
  /** Bytes of message envelopes held unsettled at once (see DEFAULT_HELD_BYTES). */
  heldBytesMax?: number;
  /**
   * The body-size limit (SMARTER_WORKER_MAX_BODY_SIZE): a heavier body stays in Redis, the worker is sent the
   * message without it (and refuses it), and its dead-letter copy is made inside Redis. 0 or absent: no limit.
   */
  maxBodyBytes?: number;
}

/**
 * What the worker holds at once, whatever the messages weigh: the envelopes taken and not yet settled add
 * up to at most this many bytes, or are a single message when it alone is heavier (taken only when nothing
 * else is held). Without it a pop of 100 messages of 20 MB each would be held at once (the body-size limit
 * protects decoding, not the fetch).
 */
export const DEFAULT_HELD_BYTES = 16 * 1024 * 1024;

/**
 * A wait shorter than this is not put in the delayed set: the message goes to its queue with its ETA, as
 * Celery sends it, and whichever worker takes it (a Python one too) holds it until due. Only our workers
 * move due messages out of the delayed set, so what only they can deliver is kept for waits worth it.
 */
export const DEFAULT_HOLD_MAX_MS = 5000;

const REDIS_CAPABILITIES: BrokerCapabilities = Object.freeze({
  nativeDelay: true,
  delayResolutionMs: DEFAULT_HOLD_MAX_MS,
  // RabbitMQ's delay range (2^28 − 1 s, about 8.5 years): an ETA beyond it is refused alike on either broker.
  maxDelayMs: (2 ** 28 - 1) * 1000,
  deadLetterExchange: false,
  ordered: true,
  atomicDefer: true,
});

/** Held past the visibility timeout, a message is restored and runs twice: an ETA is held at most half of it. */
export function redisCapabilities(
  visibilityTimeoutSeconds: number,
  holdMaxMs: number | undefined,
  logger: Logger,
): BrokerCapabilities {
  const maxHoldMs = (visibilityTimeoutSeconds * 1000) / 2;
  const holdMs = Math.min(holdMaxMs ?? DEFAULT_HOLD_MAX_MS, maxHoldMs);
  if (maxHoldMs < DEFAULT_HOLD_MAX_MS) {
    logger.warn(
      `visibility_timeout is ${visibilityTimeoutSeconds} s: ETAs are held at most ${maxHoldMs / 1000} s (half of it), longer waits go to the delayed set`,
    );
  }
  return Object.freeze({ ...REDIS_CAPABILITIES, delayResolutionMs: holdMs, maxHoldMs });
}
