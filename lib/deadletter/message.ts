/**
 * A message in a dead-letter queue, as the dead-letter tools see it: where it came from, why it is there,
 * which task it is, and when it arrived. Written by the worker (`x-dead-letter-reason`, `x-original-queue`,
 * …) or by RabbitMQ's own dead-lettering (`x-death`), and readable without decoding a body that may be
 * the very reason the message is here.
 */
import {
  DEAD_LETTER_HEADER,
  FORWARDED_BY_HEADER,
  FORWARDED_FROM_HEADER,
  RABBITMQ_DEATH_HEADER,
} from '../protocol/headers.js';
import { headersOf } from '../broker/republish.js';
import { DEFAULT_MAX_BODY_BYTES } from '../protocol/content.js';
import { decodeTaskMessage } from '../protocol/decode.js';
import type { RawMessage } from '../protocol/types.js';

/** Headers the worker adds when it dead-letters a message (see Worker.deadLetter). */
export const DEAD_LETTER_HEADERS: readonly string[] = Object.values(DEAD_LETTER_HEADER);

/**
 * Headers a replayed message must not carry: ours, RabbitMQ's dead-letter history, and the forwarding mark
 * (a replay is a fresh start; the worker it reaches decides again whether to forward it).
 */
export function isDeadLetterHeader(name: string): boolean {
  return (
    DEAD_LETTER_HEADERS.includes(name) ||
    /^x-(death|first-death-|last-death-)/.test(name) ||
    name === FORWARDED_BY_HEADER ||
    name === FORWARDED_FROM_HEADER
  );
}

export interface DeadLetter {
  reason: string;
  task: string;
  /** The queue it was dead-lettered from; null when nothing says. */
  originalQueue: string | null;
  /** When it was dead-lettered, epoch ms; null when nothing says. */
  at: number | null;
}

function text(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString();
  return null;
}

/** RabbitMQ's newest `x-death` entry, for messages it dead-lettered itself (expired, rejected, maxlen). */
function lastDeath(headers: Record<string, unknown>): Record<string, unknown> | null {
  const deaths = headers[RABBITMQ_DEATH_HEADER];
  const first: unknown = Array.isArray(deaths) ? deaths[0] : undefined;
  return typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : null;
}

function taskOf(raw: RawMessage, headers: Record<string, unknown>): string {
  const fromHeader = text(headers.task);
  if (fromHeader) return fromHeader;
  try {
    // Protocol 1 carries the name in the body.
    // Capped like the worker's intake: a zlib bomb parked here must not inflate whole in `dead-letter list`.
    return decodeTaskMessage(raw, { accept: ['json', 'msgpack', 'yaml'], maxBodyBytes: DEFAULT_MAX_BODY_BYTES }).task;
  } catch {
    return '(not a task message)';
  }
}

export function describeDeadLetter(raw: RawMessage): DeadLetter {
  const headers = headersOf(raw);
  const death = lastDeath(headers);
  const reason =
    text(headers[DEAD_LETTER_HEADER.reason]) ??
    (death ? `rabbitmq: ${text(death.reason) ?? 'dead-lettered'}` : '(no reason recorded)');
  const originalQueue = text(headers[DEAD_LETTER_HEADER.originalQueue]) ?? (death ? text(death.queue) : null);
  const atText = text(headers[DEAD_LETTER_HEADER.at]);
  let at: number | null = atText ? Date.parse(atText) : null;
  if (at === null && death && typeof death.time === 'number') at = death.time * 1000;
  if (at !== null && Number.isNaN(at)) at = null;
  return { reason, task: taskOf(raw, headers), originalQueue, at };
}
