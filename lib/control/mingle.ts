/**
 * Celery's start-up sync (`celery/worker/consumer/mingle.py`): before consuming, broadcast `hello` with our
 * node name, clock and revoked ids to every worker (Python's or ours), collect their replies for a second,
 * and take their revoked ids and clock. A countdown revoked before this worker started is then discarded
 * here too, where it would otherwise run after a rolling restart.
 */
import { randomUUID } from 'node:crypto';
import type { Broker } from '../broker/broker.js';
import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { encodeContent } from '../protocol/content.js';
import { isRecord } from '../protocol/fields.js';
import { parseKombuJson } from '../protocol/json.js';
import type { LamportClock } from './clock.js';
import { revokedForHello, revokedOfReply } from './commands.js';
import { PIDBOX_EXCHANGE, REPLY_EXCHANGE, pidboxExchange, replyExchange } from './pidbox.js';

/** Celery's `inspect(timeout=1.0)` in `Mingle.send_hello`. */
export const MINGLE_TIMEOUT_MS = 1000;

/** What mingle reads and feeds of the worker. */
export interface MingleTarget {
  /** Ids with when they were revoked (epoch ms). */
  revokedEntries(): Iterable<[string, number]>;
  learnRevoked(entries: Iterable<readonly [string, number]>): number;
}

export interface MingleResult {
  /** Nodes that answered (ourselves excluded). */
  nodes: string[];
  /** Revoked ids that were new here. */
  learned: number;
}

export async function mingle(
  broker: Broker,
  clock: LamportClock,
  nodeName: string,
  target: MingleTarget,
  logger: Logger,
  timeoutMs = MINGLE_TIMEOUT_MS,
): Promise<MingleResult> {
  logger.info('mingle: searching for neighbors');
  const ticket = randomUUID();
  const replyQueue = `${ticket}.${REPLY_EXCHANGE}`;
  const replies = new Map<string, unknown>();
  await broker.declareExchange(pidboxExchange);
  await broker.declareExchange(replyExchange);
  await broker.subscribe(
    REPLY_EXCHANGE,
    { queue: replyQueue, pattern: ticket, expiresMs: 10_000, messageTtlMs: 300_000 },
    (d) => {
      try {
        const headers = isRecord(d.raw.properties.headers) ? d.raw.properties.headers : {};
        if (headers.ticket !== undefined && headers.ticket !== ticket) return;
        const body = parseKombuJson(d.raw.body.toString('utf8'));
        if (!isRecord(body)) return;
        for (const [node, reply] of Object.entries(body)) if (node !== nodeName) replies.set(node, reply);
      } catch (err) {
        logger.warn(`mingle: dropped a malformed reply: ${coerceError(err).message}`);
      }
    },
  );
  try {
    const revoked = revokedForHello(target.revokedEntries());
    const content = encodeContent({
      method: 'hello',
      arguments: { from_node: nodeName, revoked },
      destination: null,
      pattern: null,
      matcher: null,
      ticket,
      reply_to: { exchange: REPLY_EXCHANGE, routing_key: ticket },
    });
    await broker.route(PIDBOX_EXCHANGE, '', {
      body: content.body,
      properties: {
        contentType: content.contentType,
        contentEncoding: content.contentEncoding,
        headers: { clock: clock.forward(), expires: (Date.now() + timeoutMs) / 1000 },
        deliveryMode: 1,
        priority: 0,
      },
    });
    await new Promise((r) => setTimeout(r, timeoutMs));
  } finally {
    await broker.cancel(replyQueue).catch(() => undefined);
  }
  let learned = 0;
  const nodes: string[] = [];
  for (const [node, reply] of replies) {
    // A worker answering its own hello answers null (Celery's `hello`): nothing to sync with.
    if (!isRecord(reply)) continue;
    nodes.push(node);
    if (typeof reply.clock === 'number') clock.adjust(reply.clock);
    else clock.forward();
    learned += target.learnRevoked(revokedOfReply(reply));
  }
  if (nodes.length === 0) logger.info('mingle: all alone');
  else logger.info(`mingle: sync with ${nodes.length} nodes complete`, { nodes, learnedRevoked: learned });
  return { nodes, learned };
}
