/**
 * The AMQP broker's consumers, all on its one consume channel: started with their own prefetch, started
 * again on every fresh connection, and, when the broker cancels one (its queue was deleted, a quorum queue
 * lost its leader), its queue declared again and consumed again with backoff, as Celery's consumer restarts.
 *
 * A consumer that settles what it gets, with a prefetch, holds a bounded number of bytes (held-window.ts).
 * RabbitMQ applies a prefetch to the consumers started after it only, so a window is widened by adding a
 * tag for the difference (the tags' prefetches add up to the window, never more), and narrowed by a pause:
 * while the channel's unsettled deliveries weigh more than the budget, every such consumer's tags are
 * cancelled; a paused consumer starts again, with one tag of a window fit for the sizes it saw, once the
 * channel is back under the budget and everything it took is settled.
 */
import type { Channel, ChannelModel } from 'amqplib';
import { BrokerError, coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { ConsumeOptions, DeliveryHandler } from '../broker.js';
import type { AckBatcher } from './ack-batcher.js';
import type { AmqpDeclarations } from './amqp-declare.js';
import { type AckMeta, AmqpDelivery, type DeliveryChannels } from './amqp-delivery.js';
import { DEFAULT_HELD_BYTES, HeldBytes, HeldWindow } from './held-window.js';

/** One `basic.consume` of a windowed consumer: the prefetch it was given, and its deliveries not yet settled. */
interface Take {
  window: number;
  unsettled: number;
}

interface Consumer {
  handler: DeliveryHandler;
  noAck: boolean;
  prefetch: number | undefined;
  /** Its consumer tags on the channel now (one, unless its window was widened), with what each took. */
  tags: Map<string, Take | undefined>;
  /** Set while the broker has cancelled it (its queue was deleted) and it is being restored. */
  restoring?: { attempt: number; timer?: NodeJS.Timeout | undefined };
  /** Its byte-bounded window on the channel it consumes on now; absent for noAck or prefetch-less consumers. */
  window?: HeldWindow | undefined;
  /** The channel its window and takes belong to. */
  ch?: Channel | undefined;
  /** Takes of tags cancelled on that channel whose deliveries are not all settled yet. */
  earlier: Set<Take>;
  /** Paused for the budget (its tags cancelled): still a consumer of its queue. */
  paused: boolean;
  /** Pauses, resumes and widenings, one at a time. */
  tuning?: Promise<void>;
}

/** What the consumers ask of their broker's connection, as it is now. */
export interface ConsumerHost extends DeliveryChannels {
  /** The consume channel and its acks; undefined while there is none. */
  channel(): { ch: Channel; acks: AckBatcher<AckMeta> } | undefined;
  model(): ChannelModel | undefined;
  connected(): boolean;
  closing(): boolean;
  /** False for a second copy of a message sent again after a lost confirm: acked, never handed on (copies.ts). */
  admit(m: TaskRoute & { redelivered: boolean }): boolean;
  /** A delivery of a consumer was acked here. */
  acked(m: TaskRoute): void;
}

/** What a task message is known by (copies.ts). */
interface TaskRoute {
  headers: Record<string, unknown> | undefined;
  exchange: string;
}

export interface RestoreBackoff {
  initialMs: number;
  maxMs: number;
}

/** What a windowed consumer may hold now: its tags' prefetches, and what its cancelled tags still hold. */
function capacity(c: Consumer): { finite: number; unlimited: boolean } {
  let finite = 0;
  let unlimited = false;
  for (const t of c.tags.values()) {
    if (t?.window === 0) unlimited = true;
    finite += t?.window ?? 0;
  }
  for (const t of c.earlier) finite += t.unsettled;
  return { finite, unlimited };
}

export class AmqpConsumers {
  private readonly consumers = new Map<string, Consumer>();
  /** The prefetch of the last consumer given one. */
  private configuredPrefetch: number | undefined;
  /** The unsettled deliveries of the consume channel there is now (a fresh one on every connection). */
  private held: HeldBytes;

  constructor(
    private readonly host: ConsumerHost,
    private readonly declared: Pick<AmqpDeclarations, 'restoreQueueOn'>,
    private readonly logger: Logger,
    private readonly backoff: RestoreBackoff,
    private readonly heldBudget: number = DEFAULT_HELD_BYTES,
  ) {
    this.held = new HeldBytes(heldBudget);
  }

  /** Bytes of the consume channel's unsettled deliveries now. */
  get heldBytes(): number {
    return this.held.held;
  }

  /** Every consumer again, on a fresh connection's consume channel (their queues were declared again first). */
  async restoreAll(): Promise<void> {
    // What the old channel held is redelivered by the broker: counted afresh.
    this.held = new HeldBytes(this.heldBudget);
    for (const [queue, c] of this.consumers) {
      if (c.restoring?.timer) clearTimeout(c.restoring.timer);
      c.tags.clear();
      c.paused = false;
      // A queue deleted while we were away is declared again like every other.
      await this.start(queue, c);
      c.restoring = undefined;
    }
  }

  /** One more tag for `queue`: its whole window on a fresh channel, else `want` (what the window has left). */
  private async start(queue: string, c: Consumer, want?: number): Promise<void> {
    const { handler, noAck } = c;
    const current = this.host.channel();
    if (!current) throw new BrokerError('not connected');
    const { ch, acks } = current;
    // A consumer without its own prefetch keeps the one last configured (amqplib would leave it the channel's
    // last one set, which is now some consumer's window).
    const full = c.prefetch ?? this.configuredPrefetch;
    if (c.ch !== ch) {
      c.ch = ch;
      c.window = !noAck && full !== undefined ? new HeldWindow(full, this.heldBudget) : undefined;
      c.earlier.clear();
    }
    const window = c.window;
    const held = this.held;
    const take: Take | undefined = window ? { window: want ?? window.size, unsettled: 0 } : undefined;
    // Per-consumer prefetch (global=false), set before each consume: quorum queues refuse a channel-wide
    // limit, and a worker consumes one queue in the ADR-030 deployment, where both mean the same.
    const prefetch = take ? take.window : full;
    if (prefetch !== undefined) await ch.prefetch(prefetch, false);
    const reply = await ch.consume(
      queue,
      (msg) => {
        if (msg === null) {
          this.cancelledByBroker(queue, ch);
          return;
        }
        // With noAck the broker has already forgotten the message: nothing to settle, nothing to track.
        if (noAck) {
          const delivery = new AmqpDelivery(this.host, ch, msg, queue);
          delivery.settled = true;
          handler(delivery);
          return;
        }
        const slot = acks.track(msg.fields.deliveryTag, {
          queue,
          correlationId: msg.properties.correlationId as string | undefined,
        });
        const { exchange, redelivered } = msg.fields;
        const headers: Record<string, unknown> | undefined = msg.properties.headers;
        if (!this.host.admit({ headers, exchange, redelivered })) {
          acks.ack(slot);
          return;
        }
        const onAck = () => this.host.acked({ headers, exchange });
        if (!window || !take) {
          handler(new AmqpDelivery(this.host, ch, msg, queue, { batcher: acks, slot, onAck }));
          return;
        }
        const bytes = msg.content.length;
        held.add(bytes);
        take.unsettled++;
        const released = () => {
          held.remove(bytes);
          take.unsettled--;
          // The last of a cancelled tag's deliveries: what it held the consumer may take again.
          const drained = take.unsettled === 0 && c.earlier.delete(take) && c.earlier.size === 0;
          this.settledOne(held, drained ? queue : undefined);
        };
        const delivery = new AmqpDelivery(this.host, ch, msg, queue, { batcher: acks, slot, released, onAck });
        if (held === this.held) {
          if (held.over) this.pauseAll();
          else if (window.arrived(bytes, take.window)) this.retune(queue, c);
        }
        handler(delivery);
      },
      { noAck },
    );
    c.tags.set(reply.consumerTag, take);
  }

  /** Over the budget: every windowed consumer stops taking deliveries (those it has stay unsettled, its own). */
  private pauseAll(): void {
    for (const [queue, c] of this.consumers) if (c.window && !c.paused) this.retune(queue, c);
  }

  /** A windowed consumer's delivery is settled: paused consumers may start again, a drained one take more. */
  private settledOne(held: HeldBytes, drained: string | undefined): void {
    if (held !== this.held || held.over) return;
    for (const [queue, c] of this.consumers) if (c.paused || queue === drained) this.retune(queue, c);
  }

  /** Brings a windowed consumer to what the budget says now: paused, resumed, or widened. */
  private retune(queue: string, c: Consumer): void {
    c.tuning = (c.tuning ?? Promise.resolve())
      .then(() => this.tune(queue, c))
      .catch((err: unknown) => {
        // The channel closed under us: the reconnect starts every consumer again.
        this.logger.debug(`could not change the window of ${queue}`, { queue, error: coerceError(err).message });
      });
  }

  private async tune(queue: string, c: Consumer): Promise<void> {
    const current = this.host.channel();
    const window = c.window;
    const mine = () =>
      this.consumers.get(queue) === c && !c.restoring && !this.host.closing() && this.host.channel()?.ch === c.ch;
    if (!current || !window || current.ch !== c.ch || !mine()) return;
    if (this.held.over) {
      if (c.paused) return;
      c.paused = true;
      for (const [tag, take] of [...c.tags]) {
        c.tags.delete(tag);
        if (take && take.unsettled > 0) c.earlier.add(take);
        await current.ch.cancel(tag);
      }
      return;
    }
    const { finite, unlimited } = capacity(c);
    const full = c.prefetch ?? this.configuredPrefetch ?? 0;
    let want: number;
    if (c.paused) {
      // One tag again, for as many as fit of the largest it saw, less what it still holds (but at least one
      // while the prefetch has room: an ETA held for minutes must not stop the queue).
      window.resumed();
      const held = finite;
      want = window.size === 0 ? 0 : Math.max(1, window.size - held);
      if (full > 0) want = Math.min(want, full - held);
      if (want < 1 && window.size !== 0) return;
      await this.start(queue, c, want);
      c.paused = false;
    } else {
      if (unlimited) return;
      if (window.size === 0) want = 0;
      else if (finite < window.size) want = window.size - finite;
      else return;
      await this.start(queue, c, want);
    }
    if (!mine()) {
      for (const tag of c.tags.keys()) await current.ch.cancel(tag).catch(() => undefined);
      c.tags.clear();
    }
  }

  /**
   * The broker cancelled a consumer (its queue was deleted, or a quorum queue lost its leader): declare
   * the queue again and consume it again with backoff, as Celery's consumer restarts. Until it consumes
   * again, `isConsuming` says so (readiness and `inspect active_queues` read it).
   */
  private cancelledByBroker(queue: string, ch: Channel): void {
    const c = this.consumers.get(queue);
    if (!c || c.restoring || this.host.closing()) return;
    for (const take of c.tags.values()) if (take && take.unsettled > 0) c.earlier.add(take);
    c.tags.clear();
    c.paused = false;
    c.restoring = { attempt: 0 };
    this.logger.warn(
      `consumer of ${queue} was cancelled by the broker (was the queue deleted?); declaring it and consuming it again`,
      { queue },
    );
    this.scheduleRestore(queue, c, ch);
  }

  private scheduleRestore(queue: string, c: Consumer, ch: Channel): void {
    const r = c.restoring;
    if (!r) return;
    const delay = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** r.attempt++);
    r.timer = setTimeout(() => {
      r.timer = undefined;
      // A reconnect restores every consumer itself; a cancel() since means nobody wants it any more.
      const model = this.host.model();
      if (this.host.closing() || this.consumers.get(queue) !== c || this.host.channel()?.ch !== ch || !model) return;
      this.restoreOn(model, queue, c).then(
        () => this.logger.info(`consuming ${queue} again`, { queue }),
        (err: unknown) => {
          this.logger.warn(`could not consume ${queue} again; retrying`, { queue, error: coerceError(err).message });
          this.scheduleRestore(queue, c, ch);
        },
      );
    }, delay);
  }

  private async restoreOn(model: ChannelModel, queue: string, c: Consumer): Promise<void> {
    await this.declared.restoreQueueOn(model, queue);
    // What its cancelled tags delivered and is still unsettled counts against the window of the new one.
    const size = c.window?.size;
    await this.start(queue, c, size === undefined || size === 0 ? undefined : Math.max(1, size - capacity(c).finite));
    c.restoring = undefined;
  }

  isConsuming(queue: string): boolean {
    const c = this.consumers.get(queue);
    return this.host.connected() && c !== undefined && (c.tags.size > 0 || c.paused) && !c.restoring;
  }

  /** Starts consuming `queue` on the connection there is now (the caller waited for one). */
  async consume(queue: string, handler: DeliveryHandler, options: ConsumeOptions = {}): Promise<void> {
    if (options.prefetch !== undefined) this.configuredPrefetch = options.prefetch;
    const entry: Consumer = {
      handler,
      noAck: options.noAck ?? false,
      prefetch: options.prefetch,
      tags: new Map(),
      earlier: new Set(),
      paused: false,
    };
    this.consumers.set(queue, entry);
    await this.start(queue, entry);
  }

  async cancel(queue: string): Promise<void> {
    const entry = this.consumers.get(queue);
    this.consumers.delete(queue);
    if (entry?.restoring?.timer) clearTimeout(entry.restoring.timer);
    const ch = this.host.channel()?.ch;
    if (!entry || !ch || !this.host.connected()) return;
    const tags = [...entry.tags.keys()];
    entry.tags.clear();
    for (const tag of tags) await ch.cancel(tag).catch(() => undefined);
  }
}
