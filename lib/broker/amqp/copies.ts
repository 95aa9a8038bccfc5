/**
 * Which task messages this worker has been delivered lately, and which may come twice: the one place that decides
 * whether a delivery runs, and whether a publish left in doubt by a lost connection is sent again (doubts.ts).
 *
 * A publish whose confirm was lost with its connection may be in a queue already; it is sent again only when
 * nothing says the broker has it, and then a second copy may arrive: this process discards it (acks it unrun)
 * instead of running the task twice. The same goes for a message delivered again (`redelivered`) after this
 * worker acked it: the ack was lost with its connection (a stalled link), and the task was handled here already.
 *
 * A task message is known by its Celery headers (`id`, `retries`: one attempt of a task) and by how it arrives:
 * straight to its queue, or out of the delay levels (a countdown parked in the broker). A countdown exists twice
 * for a while: its message, and the parked copy that message is turned into (acked once the copy is confirmed).
 * When that confirm is lost, both may come back: the message, redelivered unacked, and the parked copy, which the
 * broker may hold. One attempt is handed on at most once per park, so:
 * - a parked copy runs only if the attempt was parked since a copy of it was last handed on here: one that
 *   comes after the attempt's message was run here directly (or is in hand here), or after another parked copy,
 *   is discarded;
 * - a message delivered again whose parked copy has already been handed on here is discarded: it was parked.
 * A parked copy reaching another worker than the one its message comes back to is out of reach: with several
 * workers on one queue a stalled link may still run such a countdown twice (docs/reliability.md).
 */

import { AttemptTable } from './attempt-table.js';

/** What a key is read from: a message's headers and the exchange it is sent to or came through. */
export interface KeySource {
  headers?: Record<string, unknown> | undefined;
  exchange: string;
}

/** The delay levels' exchanges all begin so (topology.ts: `celery_delayed_L`, `celery_delayed_delivery`). */
const DELAY_EXCHANGE_PREFIX = 'celery_delayed';

/** `<id>:<retries>:<direct|parked>` of a Celery task message; undefined for anything else (events, replies). */
export function copyKey(m: KeySource): string | undefined {
  const id = m.headers?.['id'];
  const task = m.headers?.['task'];
  if (typeof id !== 'string' || id === '' || typeof task !== 'string') return undefined;
  const retries = Number(m.headers?.['retries'] ?? 0);
  const via = m.exchange.startsWith(DELAY_EXCHANGE_PREFIX) ? 'parked' : 'direct';
  return `${id}:${Number.isFinite(retries) ? retries : 0}:${via}`;
}

/** `<id>:<retries>` of a key: the attempt, whichever way it arrives. */
function attemptOf(key: string): string {
  return key.slice(0, key.lastIndexOf(':'));
}

function isParked(key: string): boolean {
  return key.endsWith(':parked');
}

/** A copy delivered to this process lately (delivered), sent again after a lost confirm (twice), acked here. */
const DELIVERED = 1;
const TWICE = 4;
const ACKED = 16;
/** Delivered again unacked here: the worker handles the attempt again. */
const AGAIN = 64;
/** A parked copy of it was handed on here: its message, if it comes back, was parked already. */
const PARKED_SEEN = 128;
/** A copy of it was handed on here (its time, connection in the table): a parked one or not, acked here or not. */
const HANDED = 256;
const HANDED_PARKED = 512;
const HANDED_ACKED = 1024;

/** The flag of one copy: the direct copy's bit, or the parked copy's (one to the left). */
function copyBit(flag: number, key: string): number {
  return isParked(key) ? flag << 1 : flag;
}

/** Why a delivery is acked and not run. */
export type Discard = 'second copy' | 'acked before' | 'ran here' | 'parked before';

/** What becomes of a publish in doubt: the broker has it, its message comes back to make it again, or sent. */
export type DoubtDecision = 'held' | 'made again' | 'send';

export class Copies {
  /** The attempts seen lately, by `<id>:<retries>`: a busy worker meets every attempt once, and keeps the last `max`. */
  private readonly attempts: AttemptTable;
  /** Orders the events of an attempt. */
  private clock = 0;
  /** Which connection deliveries come on now: one handed on an earlier one and never acked is redelivered. */
  private connection = 0;
  /** Second copies discarded since start. */
  discarded = 0;

  constructor(max = 100_000) {
    this.attempts = new AttemptTable(max);
  }

  /** Whether `key`'s copy of the attempt in `slot` has `flag` (AGAIN is the attempt's, whichever copy). */
  private has(slot: number | undefined, key: string, flag: number): boolean {
    return this.is(slot, flag === AGAIN ? AGAIN : copyBit(flag, key));
  }

  private is(slot: number | undefined, bit: number): boolean {
    return slot !== undefined && ((this.attempts.bits[slot] ?? 0) & bit) !== 0;
  }

  private mark(slot: number, bits: number): void {
    this.attempts.bits[slot] = (this.attempts.bits[slot] ?? 0) | bits;
  }

  private parkedAt(slot: number | undefined): number {
    return slot === undefined ? 0 : (this.attempts.parkedAt[slot] ?? 0);
  }

  /** Deliveries come on a fresh connection from now: what the last one left unacked, the broker redelivers. */
  reconnected(): void {
    this.connection++;
  }

  /** This process acked a delivery: handled here, whether or not the ack reaches the broker. */
  acked(key: string): void {
    const a = this.attempts.touch(attemptOf(key));
    this.mark(a, copyBit(ACKED, key));
    if (this.is(a, HANDED) && this.is(a, HANDED_PARKED) === isParked(key)) this.mark(a, HANDED_ACKED);
  }

  /** A task message goes out from here (a countdown parked, a retry): told before it is sent. */
  publishing(key: string | undefined): void {
    if (key === undefined || !isParked(key)) return;
    const a = this.attempts.touch(attemptOf(key));
    this.attempts.parkedAt[a] = ++this.clock;
  }

  /**
   * A publish whose confirm was lost with its connection, once that connection is gone and the messages it left
   * unacked had their time to come back: not sent when a copy of it was handed on here since it was published, or
   * when the message it was made from came back (or is bound to: handed on a connection since lost, never acked),
   * since handling that message again makes it again; otherwise sent, and a second copy of it is discarded.
   */
  doubt(key: string): DoubtDecision {
    if (isParked(key)) {
      const a = this.attempts.find(attemptOf(key));
      if (a !== undefined && this.is(a, HANDED)) {
        const t = this.attempts;
        if ((t.handedAt[a] ?? 0) > this.parkedAt(a)) return this.is(a, HANDED_PARKED) ? 'held' : 'made again';
        if (!this.is(a, HANDED_ACKED) && (t.handedConnection[a] ?? 0) < this.connection) return 'made again';
      }
      if (this.has(a, key, AGAIN)) return 'made again';
      this.publishing(key);
      return 'send';
    }
    const a = this.attempts.touch(attemptOf(key));
    if (this.has(a, key, DELIVERED)) return 'held';
    this.mark(a, copyBit(TWICE, key));
    if (this.has(a, key, AGAIN)) return 'made again';
    return 'send';
  }

  /** A delivery: why to ack it and not run it, or undefined to hand it on. */
  admit(key: string | undefined, redelivered: boolean): Discard | undefined {
    if (key === undefined) return undefined;
    const why = this.discard(key, redelivered);
    if (why !== undefined) {
      this.discarded++;
      return why;
    }
    const parked = isParked(key);
    const a = this.attempts.touch(attemptOf(key));
    const t = this.attempts;
    t.bits[a] =
      ((t.bits[a] ?? 0) & ~(HANDED_PARKED | HANDED_ACKED)) | HANDED | (parked ? HANDED_PARKED | PARKED_SEEN : 0);
    t.handedAt[a] = ++this.clock;
    t.handedConnection[a] = this.connection;
    this.mark(a, redelivered ? AGAIN : copyBit(DELIVERED, key));
    return undefined;
  }

  private discard(key: string, redelivered: boolean): Discard | undefined {
    const a = this.attempts.find(attemptOf(key));
    if (isParked(key)) {
      // Parked since a copy of it was last handed on here (or never handed on here): this copy is that park's.
      if (a === undefined || !this.is(a, HANDED) || (this.attempts.handedAt[a] ?? 0) < this.parkedAt(a)) {
        return undefined;
      }
      const handedParked = this.is(a, HANDED_PARKED);
      if (this.is(a, HANDED_ACKED)) {
        return redelivered && handedParked ? 'acked before' : handedParked ? 'second copy' : 'ran here';
      }
      // Still in hand here: another copy is discarded. One left unacked on a lost connection goes back to the
      // broker, whoever takes it handles it; and a parked copy delivered again while the one in hand is parked
      // too is that copy, requeued: its handling starts again.
      if (this.attempts.handedConnection[a] === this.connection && !(redelivered && handedParked)) {
        return handedParked ? 'second copy' : 'ran here';
      }
      return undefined;
    }
    if (redelivered && this.has(a, key, ACKED)) return 'acked before';
    if (redelivered) return this.is(a, PARKED_SEEN) ? 'parked before' : undefined;
    if (a !== undefined && this.has(a, key, DELIVERED) && this.has(a, key, TWICE)) {
      this.attempts.bits[a] = (this.attempts.bits[a] ?? 0) & ~copyBit(TWICE, key);
      return 'second copy';
    }
    return undefined;
  }
}
