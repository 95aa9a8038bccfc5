/**
 * The properties of a message sent on unchanged (forwarded, replayed from a dead-letter queue): the same
 * body bytes, content type and encoding, headers, priority, delivery mode, correlation id and reply-to (and
 * the AMQP properties Celery never sets: message id, timestamp, type, app id, user id), so
 * the caller's result still reaches it from whichever worker runs the task. Only headers change, and only
 * as asked.
 */
import { extendTable } from '../protocol/field-types.js';
import type { PassthroughProperties, PublishProperties } from '../protocol/encode.js';
import { DEAD_LETTER_HEADER, type DeadLetterReason, type Delivery } from './broker.js';
import type { RawMessage } from '../protocol/types.js';

export interface RepublishChanges {
  /** Headers added (or replaced). */
  add?: Record<string, unknown>;
  /** Headers removed, before `add` is applied. */
  drop?: (name: string) => boolean;
  /** Keep the AMQP per-message TTL; off for copies whose TTL would restart (Celery's `expires` header counts). */
  keepExpiration?: boolean;
}

export function headersOf(raw: RawMessage): Record<string, unknown> {
  const h = raw.properties.headers;
  return typeof h === 'object' && h !== null && !Array.isArray(h) ? (h as Record<string, unknown>) : {};
}

export function republishProperties(raw: RawMessage, changes: RepublishChanges = {}): PublishProperties {
  const p = raw.properties;
  const headers: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(headersOf(raw))) if (!changes.drop?.(k)) headers[k] = v;
  Object.assign(headers, changes.add ?? {});
  return {
    contentType: p.contentType ?? 'application/octet-stream',
    contentEncoding: p.contentEncoding ?? 'binary',
    headers,
    deliveryMode: p.deliveryMode === 1 ? 1 : 2,
    priority: p.priority ?? 0,
    ...(p.correlationId !== undefined ? { correlationId: p.correlationId } : {}),
    ...(p.replyTo !== undefined ? { replyTo: p.replyTo } : {}),
    ...(changes.keepExpiration && p.expiration !== undefined ? { expiration: p.expiration } : {}),
    ...passthroughOf(raw),
  };
}

/** The properties Celery never sets, as they came; nothing when none is set (the usual case). */
function passthroughOf(raw: RawMessage): { passthrough?: PassthroughProperties } {
  const { messageId, timestamp, type, appId, userId } = raw.properties;
  const out: PassthroughProperties = {
    ...(messageId !== undefined ? { messageId } : {}),
    ...(timestamp !== undefined ? { timestamp } : {}),
    ...(type !== undefined ? { type } : {}),
    ...(appId !== undefined ? { appId } : {}),
    ...(userId !== undefined ? { userId } : {}),
  };
  return Object.keys(out).length > 0 ? { passthrough: out } : {};
}

/**
 * The properties of a copy the worker makes of a delivery (a dead-letter copy, a parked ETA): persistent,
 * without the AMQP per-message TTL (Celery's `expires` header is what counts), headers as they came (a
 * float header stays a float, field-types.ts) plus `extraHeaders`.
 */
export function copyProperties(raw: RawMessage, extraHeaders: Record<string, unknown> = {}): PublishProperties {
  const p = raw.properties;
  return {
    contentType: p.contentType ?? 'application/octet-stream',
    contentEncoding: p.contentEncoding ?? 'binary',
    headers: extendTable(headersOf(raw), extraHeaders),
    deliveryMode: 2,
    priority: p.priority ?? 0,
    ...(p.correlationId !== undefined ? { correlationId: p.correlationId } : {}),
    ...(p.replyTo !== undefined ? { replyTo: p.replyTo } : {}),
    ...passthroughOf(raw),
  };
}

/** The headers of a dead-letter copy, the same on every broker (the dead-letter tools read them). */
export function deadLetterHeaders(delivery: Delivery, why: DeadLetterReason): Record<string, unknown> {
  return {
    [DEAD_LETTER_HEADER.reason]: why.reason.slice(0, 1000),
    [DEAD_LETTER_HEADER.originalQueue]: delivery.queue,
    [DEAD_LETTER_HEADER.originalExchange]: delivery.exchange,
    [DEAD_LETTER_HEADER.originalRoutingKey]: delivery.routingKey,
    [DEAD_LETTER_HEADER.by]: why.by,
    [DEAD_LETTER_HEADER.at]: (why.at ?? new Date()).toISOString(),
  };
}
