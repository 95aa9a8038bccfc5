/**
 * Which task messages this worker has been delivered lately, and which may come twice. A publish whose confirm
 * was lost with its connection may be in a queue already; connection.ts sends it again only when nothing says
 * the broker has it, and then a second copy may arrive: this process discards it (acks it unrun) when a copy
 * with the same task id, retry count and route already came, instead of running the task twice.
 *
 * The same goes for a message delivered again (`redelivered`) after this worker acked it: the ack was lost with
 * its connection (a stalled link), and the task was handled here already.
 *
 * A task message is known by its Celery headers (`id`, `retries`) and by how it arrives: straight to its queue,
 * or out of the delay levels (a countdown parked in the broker), so that a countdown's parked copy is not taken
 * for the message that asked for it.
 */

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

/** A Set that forgets its oldest entries past `max`. */
class Recent {
  private readonly keys = new Set<string>();
  constructor(private readonly max: number) {}
  has(key: string): boolean {
    return this.keys.has(key);
  }
  add(key: string): void {
    this.keys.delete(key);
    this.keys.add(key);
    if (this.keys.size > this.max) {
      const oldest = this.keys.values().next().value;
      if (oldest !== undefined) this.keys.delete(oldest);
    }
  }
  delete(key: string): boolean {
    return this.keys.delete(key);
  }
}

export class Copies {
  /** Keys of task messages delivered to this process lately. */
  private readonly delivered: Recent;
  /** Keys sent again after a lost confirm: a second copy of one of them is discarded. */
  private readonly twice: Recent;
  /** Keys of deliveries this process acked lately. */
  private readonly acks: Recent;
  /** `<id>:<retries>` of messages delivered again unacked here: the worker handles them again. */
  private readonly again: Recent;
  /** Second copies discarded since start. */
  discarded = 0;

  constructor(max = 100_000) {
    this.delivered = new Recent(max);
    this.twice = new Recent(max);
    this.acks = new Recent(max);
    this.again = new Recent(max);
  }

  /**
   * Whether the message a follow-up was made from (same task id and retry count: a countdown parked for it) came
   * back unacked: handling it again makes that follow-up again, so the one in doubt is not sent.
   */
  madeAgain(key: string): boolean {
    return this.again.has(key.slice(0, key.lastIndexOf(':')));
  }

  /** This process acked a delivery: handled here, whether or not the ack reaches the broker. */
  acked(key: string): void {
    this.acks.add(key);
  }

  /** Whether a copy of this message already came: the broker had it, so it is not sent again. */
  arrived(key: string): boolean {
    return this.delivered.has(key);
  }

  /** This message is sent again while the broker may hold it: a second copy may come. */
  expectTwice(key: string): void {
    this.twice.add(key);
  }

  /**
   * A delivery: why to ack it and not run it (a second copy of a message sent again, or a message acked here that
   * the broker delivers again because the ack was lost), or undefined to hand it on.
   */
  admit(key: string | undefined, redelivered: boolean): 'second copy' | 'acked before' | undefined {
    if (key === undefined) return undefined;
    if (redelivered) {
      if (!this.acks.has(key)) {
        this.again.add(key.slice(0, key.lastIndexOf(':')));
        return undefined;
      }
      this.discarded++;
      return 'acked before';
    }
    if (this.delivered.has(key) && this.twice.delete(key)) {
      this.discarded++;
      return 'second copy';
    }
    this.delivered.add(key);
    return undefined;
  }
}
