/**
 * Builds protocol-v2 task messages (retries, callbacks, chain steps, errbacks, `applyAsync`, Beat) that a
 * Python Celery worker accepts: every v2 header key present, nulls included, in Celery's order; body
 * `[args, kwargs, embed]` in kombu JSON. Integer header values are typed for py-amqp by the broker layer.
 */
import { encodeContent } from './content.js';
import { pyRepr, pyTupleRepr, truncate } from './repr.js';
import type { Signature, TaskMessage } from './types.js';
import type { PyDateTime } from './values.js';

/** Broker-neutral publish properties (AMQP basic properties, camelCase). */
export interface PublishProperties {
  contentType: string;
  contentEncoding: string;
  headers: Record<string, unknown>;
  deliveryMode: 1 | 2;
  priority: number;
  correlationId?: string;
  replyTo?: string;
  /** Per-message TTL in milliseconds, as a decimal string (AMQP `expiration`). */
  expiration?: string;
  /** The AMQP properties Celery never sets, carried only when a message is sent on unchanged (forwarding, replay). */
  passthrough?: PassthroughProperties;
}

export interface PassthroughProperties {
  messageId?: string;
  /** Seconds since the epoch (AMQP `timestamp`). */
  timestamp?: number;
  type?: string;
  appId?: string;
  userId?: string;
}

export interface EncodedMessage {
  body: Buffer;
  properties: PublishProperties;
}

export type OutgoingTask = Pick<TaskMessage, 'id' | 'task' | 'args' | 'kwargs'> &
  Partial<Omit<TaskMessage, 'protocol' | 'id' | 'task' | 'args' | 'kwargs' | 'correlationId'>>;

export function encodeTaskMessage(t: OutgoingTask, nowMs: number = Date.now()): EncodedMessage {
  const eta: PyDateTime | null = t.eta ?? null;
  const expires: PyDateTime | null = t.expires ?? null;
  const headers: Record<string, unknown> = {
    lang: 'py',
    task: t.task,
    id: t.id,
    shadow: t.shadow ?? null,
    eta: eta ? eta.iso : null,
    expires: expires ? expires.iso : null,
    group: t.group ?? null,
    group_index: t.groupIndex ?? null,
    retries: t.retries ?? 0,
    timelimit: t.timelimit ?? [null, null],
    root_id: t.rootId ?? t.id,
    parent_id: t.parentId ?? null,
    argsrepr: t.argsrepr ?? truncate(pyTupleRepr(t.args)),
    kwargsrepr: t.kwargsrepr ?? truncate(pyRepr(t.kwargs)),
    origin: t.origin ?? null,
    ignore_result: t.ignoreResult ?? false,
    replaced_task_nesting: t.replacedTaskNesting ?? 0,
    stamped_headers: t.stampedHeaders ?? null,
    stamps: t.stamps ?? {},
    ...(t.customHeaders ?? {}),
  };
  const embed: Record<string, Signature[] | Signature | null> = {
    callbacks: t.callbacks ?? null,
    errbacks: t.errbacks ?? null,
    chain: t.chain ?? null,
    chord: t.chord ?? null,
  };
  const content = encodeContent([t.args, t.kwargs, embed]);
  const properties: PublishProperties = {
    contentType: content.contentType,
    contentEncoding: content.contentEncoding,
    headers,
    deliveryMode: 2,
    priority: t.priority ?? 0,
    correlationId: t.id,
  };
  if (t.replyTo) properties.replyTo = t.replyTo;
  if (expires) properties.expiration = String(Math.max(0, Math.floor(expires.epochMs - nowMs)));
  return { body: content.body, properties };
}
