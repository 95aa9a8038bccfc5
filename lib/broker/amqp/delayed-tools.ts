/**
 * The operator's tools for the delay levels (`celery_delayed_0` … `_27`): purge, or release (move back into
 * its queue now, body and properties unchanged, so the consuming worker holds it until the ETA it carries,
 * as Python workers do). The destination is the routing key after the 28 bit words (kombu's
 * `calculate_routing_key`).
 *
 * Levels are walked from 27 down to 0: a message that falls to the next level during the walk lands in one not
 * walked yet. A purge of every queue is `queue.purge` of each level (everything in a level is a countdown).
 * Otherwise each level is consumed with a window of `prefetch` deliveries: a message of Q is acked (purge),
 * or copied into Q on a confirm channel and acked only once the copy is confirmed (release), so nothing is
 * lost; a message of another queue is left unacked and returns to its level when the walk's channel closes.
 * Those held messages count against the window, so when they fill half of it a second consumer is opened
 * beside the first (on a channel of its own).
 *
 * An ack can be lost even when it was sent: RabbitMQ 3.10 settles a quorum queue's acks asynchronously, and
 * closing the channel right after them returned ~0.2% of 20,000 acked messages to their level. So a walk waits
 * a moment before it closes, and a level whose walk acted is walked again: a message whose task id this run
 * has already acted on, under the same routing key, is acked there without a second copy (`caught`), until a
 * walk finds none. The same task id under another routing key is that task parked again since (a worker took the
 * released copy and parked it until its ETA): a release leaves it parked (`reparked`), a purge removes it.
 *
 * Aborted (Ctrl-C), the walk takes nothing more, waits for the copies in flight, acks the confirmed ones and
 * closes: every countdown is then released once or still parked. A copy confirmed whose ack never reaches the
 * broker (the connection lost, or the process killed, between the two) exists twice: when the ack fails here
 * it is counted in `doubled`, with its task id; a kill in that instant goes unseen.
 */
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import type { DelayedToolOptions } from '../broker.js';
import { copyProperties } from '../republish.js';
import { type AckBatcher, channelAcks } from './ack-batcher.js';
import type { RawMessage } from '../../protocol/types.js';
import { statsOn } from './amqp-declare.js';
import { ConfirmPublisher } from './amqp-publish.js';
import { DELAY_LEVELS } from './topology.js';

/** The queue a delay-level message is for: its routing key after the 28 bit words. */
export function delayedDestination(routingKey: string): string | null {
  const words = routingKey.split('.');
  if (words.length <= DELAY_LEVELS || !words.slice(0, DELAY_LEVELS).every((w) => w === '0' || w === '1')) return null;
  return words.slice(DELAY_LEVELS).join('.');
}

export const levelName = (level: number) => `celery_delayed_${level}`;

export interface DelayLevelOutcome {
  acted: number;
  /** Released copies whose original could not be acked after the copy was confirmed: they exist twice. */
  doubled: string[];
  /** Released copies refused (no such queue, or nacked): their originals stay parked. */
  refused: number;
  /** Originals acked once already, seen again in their level (the ack lost) and settled then: not counted twice. */
  caught: number;
  /** Tasks released by this run and parked again since by a worker (a new countdown): left parked. */
  reparked: number;
}

export interface WalkOptions extends DelayedToolOptions {
  /** Deliveries the walk holds at most (matching ones in flight plus other queues' ones). */
  prefetch?: number;
  /** How long a level may deliver nothing, with messages still ready in it, before its walk ends. */
  stallMs?: number;
}

/** A delivery acked by the walk: its task id, and whether the outcome counted it as acted on. */
interface Acked {
  id: string;
  counted: boolean;
}

// The copies' confirms come back in bursts: a window this deep keeps the broker busy meanwhile, for about 16 MB
// of deliveries held at most (docs/delayed-delivery.md gives the windows measured).
const DEFAULT_PREFETCH = 12_000;
const SETTLE_MS = 1000;

async function readyCounts(model: ChannelModel): Promise<number[]> {
  const ch = await model.createChannel();
  ch.on('error', () => undefined);
  try {
    const counts: number[] = [];
    for (let level = 0; level < DELAY_LEVELS; level++) {
      // A level missing (the topology never declared here) holds nothing; its 404 closes this channel.
      counts.push(await ch.checkQueue(levelName(level)).then((r) => r.messageCount));
    }
    return counts;
  } catch {
    return (await perLevel(model)).map((n) => n ?? 0);
  } finally {
    await ch.close().catch(() => undefined);
  }
}

async function perLevel(model: ChannelModel): Promise<Array<number | null>> {
  const out: Array<number | null> = [];
  for (let level = 0; level < DELAY_LEVELS; level++) {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    out.push(
      await ch.checkQueue(levelName(level)).then(
        (r) => r.messageCount,
        () => null,
      ),
    );
    await ch.close().catch(() => undefined);
  }
  return out;
}

export async function actOnDelayLevels(
  model: ChannelModel,
  action: 'purge' | 'release',
  queue: string | undefined,
  options: WalkOptions = {},
): Promise<DelayLevelOutcome> {
  const counts = await readyCounts(model);
  const progress = { seen: 0, acted: 0, total: counts.reduce((a, b) => a + b, 0) };
  const outcome: DelayLevelOutcome = { acted: 0, doubled: [], refused: 0, caught: 0, reparked: 0 };
  const report = () => options.onProgress?.({ ...progress });
  if (action === 'purge' && queue === undefined) {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    try {
      for (let level = DELAY_LEVELS - 1; level >= 0 && !options.signal?.aborted; level--) {
        if ((counts[level] ?? 0) === 0) continue;
        const { messageCount } = await ch.purgeQueue(levelName(level));
        progress.seen += messageCount;
        progress.acted += messageCount;
        outcome.acted += messageCount;
        report();
      }
    } finally {
      await ch.close().catch(() => undefined);
    }
    return outcome;
  }
  let confirm: ConfirmChannel | undefined;
  const publisher = new ConfirmPublisher();
  if (action === 'release') {
    confirm = await model.createConfirmChannel();
    confirm.on('error', () => undefined);
    publisher.watch(confirm);
  }
  // The task ids acted on, with the routing key of the original: an original seen again (its ack lost) is settled
  // without a second copy. A worker that parks a released copy again gives it a new countdown, so a new key.
  const done = new Map<string, string>();
  const reparked = new Set<string>();
  try {
    for (let level = DELAY_LEVELS - 1; level >= 0 && !options.signal?.aborted; level--) {
      let expected = counts[level] ?? 0;
      // Walked again while the last walk acted: what it acked is gone, or comes back and is only settled now.
      for (let pass = 0; expected > 0 && pass < 4 && !options.signal?.aborted; pass++) {
        const before = outcome.acted + outcome.caught;
        const unsent = (acked: Acked[]) => {
          // Acked here but never sent (the channel went): a released copy exists twice, a purged one is still parked.
          for (const { id, counted } of acked) {
            if (!counted) continue;
            progress.acted--;
            outcome.acted--;
            if (confirm) outcome.doubled.push(id);
            else done.delete(id);
          }
        };
        const left = await walkLevel(model, levelName(level), expected, queue, options, unsent, (m, ack) => {
          if (pass === 0 && ++progress.seen % 500 === 0) report();
          if (!m) return undefined;
          const id = taskIdOf(m);
          const key = m.fields.routingKey;
          if (done.get(id) === key) {
            ack(id, false);
            outcome.caught++;
            return undefined;
          }
          if (confirm && done.has(id)) {
            reparked.add(id);
            return Promise.resolve(false);
          }
          if (!confirm) {
            ack(id);
            done.set(id, key);
            progress.acted++;
            outcome.acted++;
            return undefined;
          }
          const to = delayedDestination(m.fields.routingKey) ?? '';
          return publisher.publish(confirm, '', to, m.content, copyProperties(rawOf(m)), true).then(
            () => {
              done.set(id, key);
              try {
                ack(id);
                progress.acted++;
                outcome.acted++;
              } catch {
                outcome.doubled.push(id);
              }
              return true;
            },
            () => {
              outcome.refused++;
              return false;
            },
          );
        });
        if (outcome.acted + outcome.caught === before) break;
        // What the closed channels returned may not be counted in the level yet (a quorum queue requeues them
        // asynchronously): read at once, the count can miss a whole window of them.
        expected = Math.max(left, (await statsOn(model, levelName(level)))?.messageCount ?? 0);
      }
      report();
    }
  } finally {
    await confirm?.close().catch(() => undefined);
  }
  report();
  outcome.reparked = reparked.size;
  return outcome;
}

/**
 * Consumes one level until it has delivered what it held at the start (`expected`), or it stalls, or the walk
 * is aborted; `act` is called with each message for `queue` (null for another queue's) and may return a
 * promise that settles it (false: left unacked, held like another queue's). Resolves once every such promise
 * has and the walk's channels are closed, which returns what was left unacked to the level, with how many that
 * was. Stalled means nothing delivered for `stallMs` with no copy in flight and messages still ready.
 * A window full of held messages gets a second channel and consumer beside the first.
 */
async function walkLevel(
  model: ChannelModel,
  name: string,
  expected: number,
  queue: string | undefined,
  options: WalkOptions,
  unsent: (acked: Acked[]) => void,
  act: (m: ConsumeMessage | null, ack: (id: string, counted?: boolean) => void) => Promise<boolean> | undefined,
): Promise<number> {
  const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
  const stallMs = options.stallMs ?? 3000;
  const channels: Array<{ ch: Channel; acks: AckBatcher<Acked> }> = [];
  let received = 0;
  let inFlight = 0;
  let stopping = false;
  // A delivery or a settled copy: the stall clock starts again when the last copy in flight settles.
  let lastActivity = Date.now();
  /** Deliveries left unacked (held, refused, or come after the stop): they return to the level at the close. */
  let left = 0;
  let failed: Error | undefined;
  let wake: () => void = () => undefined;
  const stop = () => {
    stopping = true;
    wake();
  };
  const open = async (): Promise<void> => {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    // One multiple ack per run of settled deliveries: a quorum level settles each ack frame as a log entry.
    // What the closed channel refused stays waiting and is reported when the walk ends.
    const acks = channelAcks<Acked>(ch, () => undefined);
    channels.push({ ch, acks });
    let held = 0;
    let opening = false;
    const hold = () => {
      held++;
      left++;
      if (held < prefetch / 2 || opening || stopping) return;
      opening = true;
      open().catch((err: unknown) => {
        failed = err instanceof Error ? err : new Error(String(err));
        stop();
      });
    };
    await ch.prefetch(prefetch);
    await ch.consume(
      name,
      (m) => {
        // Delivered after the stop: left unacked, it returns to its level when the channel closes.
        if (!m) return;
        if (stopping) {
          left++;
          return;
        }
        lastActivity = Date.now();
        received++;
        const to = delayedDestination(m.fields.routingKey);
        const mine = to !== null && (queue === undefined || to === queue);
        // Every delivery is tracked, held ones too, so that a multiple ack never reaches past one left unacked.
        const slot = acks.track(m.fields.deliveryTag, { id: '', counted: false });
        const settling = act(mine ? m : null, (id, counted = true) => {
          slot.meta.id = id;
          slot.meta.counted = counted;
          if (!acks.ack(slot)) throw new Error('channel closed');
        });
        if (!mine) hold();
        else if (settling) {
          inFlight++;
          void settling.then((settled) => {
            inFlight--;
            lastActivity = Date.now();
            if (!settled) hold();
            wake();
          });
        }
        if (received >= expected) stop();
      },
      { noAck: false },
    );
  };
  const timer = setInterval(() => {
    // Copies awaiting their confirms (a window full of them, or a connection blocked by an alarm) are not a stall.
    if (stopping || inFlight > 0 || Date.now() - lastActivity < 500) return;
    // Quiet: finished when nothing is ready any more (some of its messages fell to the next level meanwhile).
    void statsOn(model, name).then(
      (r) => {
        if (!r || r.messageCount === 0 || Date.now() - lastActivity > stallMs) stop();
      },
      () => stop(),
    );
  }, 250);
  options.signal?.addEventListener('abort', stop);
  try {
    if (!options.signal?.aborted) await open();
    else stop();
    await new Promise<void>((resolve) => {
      wake = () => {
        if (stopping && inFlight === 0) resolve();
      };
      wake();
    });
    if (failed) throw failed;
  } finally {
    clearInterval(timer);
    options.signal?.removeEventListener('abort', stop);
    // Acks are settled by the quorum queue asynchronously; a channel closed at once can lose the last of them.
    // The last acks' flush (scheduled for the end of their turn) runs meanwhile.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    for (const { ch, acks } of channels) {
      const lost = acks.drop();
      left += lost.length;
      if (lost.length > 0) unsent(lost);
      await ch.close().catch(() => undefined);
    }
  }
  return left;
}

function rawOf(m: ConsumeMessage): RawMessage {
  // amqplib types every property `any`: read here as what AMQP carries.
  const p: RawMessage['properties'] = m.properties;
  return { body: m.content, properties: p };
}

function taskIdOf(m: ConsumeMessage): string {
  const headers: unknown = m.properties.headers;
  const id = typeof headers === 'object' && headers !== null ? (headers as Record<string, unknown>).id : undefined;
  return typeof id === 'string' ? id : String(m.properties.correlationId ?? '(no id)');
}
