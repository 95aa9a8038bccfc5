/**
 * The operator's tools for a dead-letter queue. Both read it with `Broker.take` and never ack what they
 * only look at: what they hold unacked goes back, in its place, when the walk ends (or their process
 * dies), so a listing loses and reorders nothing. A replay publishes each chosen message back to its
 * original queue, waits for the broker's confirm, and only then acks (removes) it: a crash duplicates at
 * most the one message in flight and loses none.
 */
import type { Broker, Delivery } from '../broker/broker.js';
import { republishProperties } from '../broker/republish.js';
import { BrokerError } from '../errors.js';
import { type DeadLetter, describeDeadLetter, isDeadLetterHeader } from './message.js';

export interface DeadLetterSummary {
  queue: string;
  total: number;
  byReason: Map<string, number>;
  byTask: Map<string, number>;
  oldest: number | null;
  newest: number | null;
}

/**
 * Gets up to the queue's current message count, unacked, handing each to `visit`. New messages that
 * arrive meanwhile are not visited: a replayed message that fails again and comes back is not replayed twice.
 */
async function walk(
  broker: Broker,
  queue: string,
  visit: (m: Delivery, d: DeadLetter) => Promise<void>,
): Promise<void> {
  const stats = await broker.inspectQueue(queue);
  if (stats === null) throw new BrokerError(`queue ${queue} does not exist`);
  await broker.take(queue, stats.messageCount, (m) => visit(m, describeDeadLetter(m.raw)));
}

const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

export async function listDeadLetters(broker: Broker, queue: string): Promise<DeadLetterSummary> {
  const s: DeadLetterSummary = { queue, total: 0, byReason: new Map(), byTask: new Map(), oldest: null, newest: null };
  await walk(broker, queue, async (_m, d) => {
    s.total++;
    bump(s.byReason, d.reason);
    bump(s.byTask, d.task);
    if (d.at !== null) {
      s.oldest = s.oldest === null ? d.at : Math.min(s.oldest, d.at);
      s.newest = s.newest === null ? d.at : Math.max(s.newest, d.at);
    }
  });
  return s;
}

export interface ReplayOptions {
  /** Only messages of this task name. */
  task?: string;
  /** Only messages whose reason contains this text. */
  reason?: string;
  /** At most this many. */
  limit?: number;
  /** Publish to this queue instead of each message's original queue. */
  to?: string;
  /** Called after each message is replayed (confirmed and removed). */
  onReplayed?: (d: DeadLetter, target: string) => void;
}

export interface ReplayReport {
  replayed: number;
  /** By target queue. */
  replayedTo: Map<string, number>;
  /** Chosen but left in place: their queue no longer exists, or nothing says where they came from. */
  stayed: Array<{ reason: string; count: number }>;
  /** Not chosen by the filters (or beyond the limit). */
  skipped: number;
}

export async function replayDeadLetters(broker: Broker, queue: string, o: ReplayOptions = {}): Promise<ReplayReport> {
  const report: ReplayReport = { replayed: 0, replayedTo: new Map(), stayed: [], skipped: 0 };
  const stayed = new Map<string, number>();
  const exists = new Map<string, boolean>();
  await walk(broker, queue, async (m, d) => {
    const chosen =
      (o.task === undefined || d.task === o.task) && (o.reason === undefined || d.reason.includes(o.reason));
    if (!chosen || (o.limit !== undefined && report.replayed >= o.limit)) {
      report.skipped++;
      return;
    }
    const target = o.to ?? d.originalQueue;
    if (target === null) {
      bump(stayed, 'no original queue recorded');
      return;
    }
    if (!exists.has(target)) exists.set(target, (await broker.inspectQueue(target)) !== null);
    if (!exists.get(target)) {
      bump(stayed, `queue ${target} does not exist`);
      return;
    }
    const props = republishProperties(m.raw, { drop: isDeadLetterHeader });
    await broker.send(target, { body: m.raw.body, properties: props });
    m.ack();
    report.replayed++;
    bump(report.replayedTo, target);
    o.onReplayed?.(d, target);
  });
  report.stayed = [...stayed].map(([reason, count]) => ({ reason, count }));
  return report;
}
