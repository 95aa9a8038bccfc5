/**
 * Publishes whose confirm was lost with their connection (lost, or renewed as stuck): the broker may hold them
 * or not, and may still receive them from the old connection's socket (a stalled link that heals). Sent again
 * blindly, what the broker had would be there twice: a retry or a countdown run twice, a dead-letter copy twice.
 *
 * So on the next connection nothing is sent again until the old connection is gone on the broker's side (its
 * fence, an exclusive queue, deleted: everything it sent has been routed or never will be). Then each one:
 * - a dead-letter copy is looked for in its dead-letter queue (no worker consumes it), and sent only if absent;
 * - a task message (a retry, a countdown parked in the delay levels, a chain link) is sent again or not as
 *   copies.ts decides: not when a copy of it has already been delivered to this worker, nor when the message it
 *   was made from came back unacked or is bound to (its ack waited for this publish), since handling that message
 *   again makes it again; otherwise it is sent. Either way a second copy reaching this worker is discarded unrun;
 * - anything else (an event, a control reply) is sent again: a second copy of those is harmless.
 * Their callers wait meanwhile, neither failed nor told twice.
 */
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import type { Logger } from '../../logger.js';
import { amqpCode, scratch } from './amqp-declare.js';
import type { ConfirmPublisher, InDoubt } from './amqp-publish.js';
import { type Copies, copyKey } from './copies.js';

/** How often the old connection's fence is looked at. */
const FENCE_POLL_MS = 250;
/**
 * How long after the old connection is gone the decisions wait: the messages it left unacked come back first on
 * the new one (redelivered at the head of their queues), and each says whether a follow-up in doubt is made again.
 * A countdown's park does not depend on it: its message, left unacked, comes back whenever it does (copies.ts).
 */
const REDELIVERY_GRACE_MS = 2000;
/** How many messages of a dead-letter queue are looked at for copies in doubt; past them, they are sent. */
const DEAD_LETTER_LOOK_MAX = 10_000;

export class Doubts {
  /** Publishes sent again after their connection was lost or renewed unconfirmed. */
  sentAgain = 0;
  /** Publishes in doubt found held by the broker: not sent again. */
  foundHeld = 0;

  constructor(
    private readonly publisher: ConfirmPublisher,
    private readonly copies: Copies,
    private readonly logger: Logger,
    /** Whether `ch` is still the publish channel to send on (false once the connection is lost again). */
    private readonly current: (ch: ConfirmChannel) => boolean,
  ) {}

  /** Settles every publish in doubt on a fresh connection (`model` consumes, `ch` publishes). */
  async settle(model: ChannelModel, ch: ConfirmChannel): Promise<void> {
    const doubts = this.publisher.detached();
    if (doubts.length === 0) return;
    try {
      const fences = new Set(doubts.map((d) => d.fence).filter((f): f is string => f !== undefined));
      for (const fence of fences) if (!(await this.fenceGone(model, ch, fence, doubts.length))) return;
      if (doubts.some((d) => !d.deadLetter)) await new Promise((r) => setTimeout(r, REDELIVERY_GRACE_MS));
      if (!this.current(ch)) return;
      const held = await this.deadLettersHeld(
        model,
        doubts.filter((d) => d.deadLetter),
      );
      let sent = 0;
      let found = 0;
      let again = 0;
      for (const d of doubts) {
        if (!this.current(ch)) return;
        const key = d.deadLetter ? undefined : copyKey({ headers: d.properties.headers, exchange: d.exchange });
        const decision = held.has(d) ? 'held' : key !== undefined ? this.copies.doubt(key) : 'send';
        if (decision === 'held') {
          this.publisher.heldByBroker(d);
          found++;
          continue;
        }
        if (decision === 'made again') {
          // Its caller's delivery is gone with the connection: it hears the publish went, and its ack is stale.
          this.publisher.heldByBroker(d);
          again++;
          continue;
        }
        this.publisher.sendAgain(d, ch);
        sent++;
      }
      this.sentAgain += sent;
      this.foundHeld += found;
      this.logger.info(
        `${doubts.length} publish(es) left unconfirmed by a lost connection: ${found} found held by the broker, ${again} made again from their redelivered message, ${sent} sent again`,
        { in_doubt: doubts.length, found_held: found, made_again: again, sent_again: sent },
      );
    } catch (err) {
      // The new connection failed meanwhile: the next one settles them.
      if (this.current(ch)) {
        this.logger.warn('could not settle publishes left unconfirmed by a lost connection; trying again', {
          error: err instanceof Error ? err.message : String(err),
        });
        await new Promise((r) => setTimeout(r, 1000));
        if (this.current(ch)) return this.settle(model, ch);
      }
    }
  }

  /** Waits until the broker has deleted `fence` (closed its connection); false when `ch` was lost meanwhile. */
  private async fenceGone(model: ChannelModel, ch: ConfirmChannel, fence: string, n: number): Promise<boolean> {
    let told = false;
    const since = Date.now();
    for (;;) {
      if (!this.current(ch)) return false;
      try {
        await scratch(model, (s) => s.checkQueue(fence));
      } catch (err) {
        if (amqpCode(err) === 404) {
          if (told) this.logger.info(`the lost connection is closed after ${Date.now() - since} ms`);
          return true;
        }
        if (amqpCode(err) === undefined) throw err;
      }
      if (!told) {
        told = true;
        this.logger.info(
          `${n} publish(es) left unconfirmed by a lost connection wait until the broker has closed it (it may still route them)`,
          { in_doubt: n },
        );
      }
      await new Promise((r) => setTimeout(r, FENCE_POLL_MS));
    }
  }

  /** The dead-letter copies in doubt that their queue holds (looked at unacked, then returned). */
  private async deadLettersHeld(model: ChannelModel, copies: InDoubt[]): Promise<Set<InDoubt>> {
    const held = new Set<InDoubt>();
    const byQueue = new Map<string, InDoubt[]>();
    for (const d of copies) byQueue.set(d.routingKey, [...(byQueue.get(d.routingKey) ?? []), d]);
    for (const [queue, mine] of byQueue) {
      await scratch(model, async (s) => {
        for (let i = 0; i < DEAD_LETTER_LOOK_MAX && held.size < copies.length; i++) {
          let m;
          try {
            m = await s.get(queue, { noAck: false });
          } catch (err) {
            if (amqpCode(err) === 404) return;
            throw err;
          }
          if (m === false) return;
          const id: unknown = m.properties.headers?.['id'];
          const d = mine.find((c) => !held.has(c) && c.properties.headers?.['id'] === id && c.body.equals(m.content));
          if (d) held.add(d);
        }
      });
    }
    return held;
  }
}
