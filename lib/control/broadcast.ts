/**
 * Celery's broadcast with replies (`celery.app.control.Control.broadcast`, kombu's `Mailbox._broadcast`): one
 * request to every worker's pidbox through the `celery.pidbox` fanout, replies collected on a queue of the request's
 * own ticket until the timeout (or, with named destinations, until each has answered). Used by the CLI's inspect
 * and control (client.ts) and by the start-up sync (mingle.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Broker } from '../broker/broker.js';
import { coerceError } from '../errors.js';
import { encodeContent } from '../protocol/content.js';
import { isRecord } from '../protocol/fields.js';
import { parseKombuJson } from '../protocol/json.js';
import { PIDBOX_EXCHANGE, REPLY_EXCHANGE, pidboxExchange, replyExchange } from './pidbox.js';

export interface BroadcastOptions {
  timeoutMs: number;
  /** Node names; every node when absent. */
  destination?: readonly string[];
  /** Each reply as it comes. */
  onReply?: (node: string, reply: unknown) => void;
  /** The Lamport clock the request carries (Celery's `clock` header); 1 for a client that keeps none. */
  clock?: number;
  /** A reply that could not be read (another client's, or garbage); the timeout still ends the wait. */
  onMalformed?: (err: Error) => void;
}

/** Sends a command to the workers and collects their replies, `[{node: reply}, ...]` in arrival order. */
export async function broadcast(
  broker: Broker,
  method: string,
  args: Record<string, unknown>,
  o: BroadcastOptions,
): Promise<Array<Record<string, unknown>>> {
  const ticket = randomUUID();
  const replyQueue = `${ticket}.${REPLY_EXCHANGE}`;
  const replies: Array<Record<string, unknown>> = [];
  const wanted = o.destination && o.destination.length > 0 ? new Set(o.destination) : null;
  let done: () => void = () => undefined;
  const complete = new Promise<void>((r) => (done = r));
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
        replies.push(body);
        for (const [node, reply] of Object.entries(body)) o.onReply?.(node, reply);
        // Celery's `limit`: with named destinations, stop once each has answered.
        if (wanted && replies.length >= wanted.size) done();
      } catch (err) {
        o.onMalformed?.(coerceError(err));
      }
    },
  );
  try {
    const content = encodeContent({
      method,
      arguments: args,
      destination: wanted ? [...wanted] : null,
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
        headers: { clock: o.clock ?? 1, expires: (Date.now() + o.timeoutMs) / 1000 },
        deliveryMode: 1,
        priority: 0,
      },
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([complete, new Promise((r) => (timer = setTimeout(r, o.timeoutMs)))]);
    clearTimeout(timer);
  } finally {
    await broker.cancel(replyQueue).catch(() => undefined);
  }
  return replies;
}
