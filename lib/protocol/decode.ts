/**
 * The one decoder: an AMQP message in, a `TaskMessage` out, or a `ProtocolError` whose code tells the worker
 * what Celery would do with it (see `worker/settle/decide.ts`):
 *   PROTOCOL_UNKNOWN_MESSAGE    → reject, no requeue  (Celery `on_unknown_message`)
 *   PROTOCOL_DECODE             → ack                 (Celery `on_decode_error`: "so it doesn't enter a loop")
 *   PROTOCOL_CONTENT_DISALLOWED → reject, no requeue  (Celery `ContentDisallowed`)
 *   PROTOCOL_INVALID            → reject, no requeue  (Celery `InvalidTaskError`)
 */
import { ProtocolError } from '../errors.js';
import { checkBodySize, decodeContent, type Serializer } from './content.js';
import { fieldErrorOf } from './field-types.js';
import { isRecord, list, mapping, optBool, optDateTime, optInt, optStr, str, timelimit } from './fields.js';
import { pyRepr, pyTupleRepr, truncate } from './repr.js';
import type { RawMessage, Signature, TaskMessage } from './types.js';

/** Header keys of protocol v2; anything else is a custom header. */
export const V2_HEADER_KEYS = [
  'lang',
  'task',
  'id',
  'shadow',
  'eta',
  'expires',
  'group',
  'group_index',
  'retries',
  'timelimit',
  'root_id',
  'parent_id',
  'argsrepr',
  'kwargsrepr',
  'origin',
  'ignore_result',
  'replaced_task_nesting',
  'stamped_headers',
  'stamps',
] as const;
const KNOWN = new Set<string>([...V2_HEADER_KEYS, 'compression', 'meth']);

function signatures(v: unknown, where: string): Signature[] | null {
  if (v === undefined || v === null) return null;
  return list(v, where).map((s, i) => signature(s, `${where}[${i}]`));
}

function signature(v: unknown, where: string): Signature {
  const m = mapping(v, where);
  return {
    ...m,
    task: str(m.task, `${where}.task`),
    args: m.args === undefined || m.args === null ? [] : list(m.args, `${where}.args`),
    kwargs: m.kwargs === undefined || m.kwargs === null ? {} : mapping(m.kwargs, `${where}.kwargs`),
    options: m.options === undefined || m.options === null ? {} : mapping(m.options, `${where}.options`),
    subtask_type: optStr(m.subtask_type, `${where}.subtask_type`),
    immutable: optBool(m.immutable, `${where}.immutable`) ?? false,
  };
}

function optSignature(v: unknown, where: string): Signature | null {
  return v === undefined || v === null ? null : signature(v, where);
}

function headersOf(raw: RawMessage): Record<string, unknown> {
  const h = raw.properties.headers;
  if (h === undefined || h === null) return {};
  if (!isRecord(h)) {
    throw new ProtocolError('PROTOCOL_UNKNOWN_MESSAGE', 'headers', 'headers are not a mapping');
  }
  const cut = fieldErrorOf(h);
  if (cut) {
    throw new ProtocolError(
      'PROTOCOL_DECODE',
      `headers.${cut.key}`,
      `AMQP field type ${JSON.stringify(cut.tag)} is not one that RabbitMQ or py-amqp defines; the headers from here on could not be read`,
    );
  }
  return h;
}

function customHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // for-in, not Object.entries: no [key, value] pair per header (a plain table has no inherited keys).
  for (const k in headers) if (!KNOWN.has(k) && Object.hasOwn(headers, k)) out[k] = headers[k];
  return out;
}

function properties(raw: RawMessage, id: string) {
  return {
    correlationId: raw.properties.correlationId ?? id,
    replyTo: raw.properties.replyTo || null,
    priority: raw.properties.priority ?? 0,
  };
}

function decodeV2(raw: RawMessage, headers: Record<string, unknown>, body: unknown): TaskMessage {
  const id = str(headers.id, 'headers.id');
  let args: unknown[];
  let kwargs: Record<string, unknown>;
  let embed: Record<string, unknown> = {};
  if (Array.isArray(body)) {
    args = list(body[0] ?? [], 'body[0] (args)');
    kwargs = mapping(body[1] ?? {}, 'body[1] (kwargs)');
    if (body[2] !== undefined && body[2] !== null) embed = mapping(body[2], 'body[2] (embed)');
  } else if (isRecord(body) && 'args' in body) {
    // "Hybrid" message: v2 headers with a v1-style body dict (Celery `hybrid_to_proto2`).
    args = list(body.args ?? [], 'body.args');
    kwargs = mapping(body.kwargs ?? {}, 'body.kwargs');
    embed = { callbacks: body.callbacks, errbacks: body.errbacks, chain: body.chain, chord: body.chord };
  } else {
    throw new ProtocolError('PROTOCOL_INVALID', 'body', 'expected [args, kwargs, embed]');
  }
  return {
    protocol: 2,
    id,
    task: str(headers.task, 'headers.task'),
    args,
    kwargs,
    retries: optInt(headers.retries, 'headers.retries') ?? 0,
    eta: optDateTime(headers.eta, 'headers.eta'),
    expires: optDateTime(headers.expires, 'headers.expires'),
    timelimit: timelimit(headers.timelimit, 'headers.timelimit'),
    rootId: optStr(headers.root_id, 'headers.root_id'),
    parentId: optStr(headers.parent_id, 'headers.parent_id'),
    group: optStr(headers.group, 'headers.group'),
    groupIndex: optInt(headers.group_index, 'headers.group_index'),
    shadow: optStr(headers.shadow, 'headers.shadow'),
    origin: optStr(headers.origin, 'headers.origin'),
    ignoreResult: optBool(headers.ignore_result, 'headers.ignore_result'),
    argsrepr: optStr(headers.argsrepr, 'headers.argsrepr') ?? truncate(pyTupleRepr(args)),
    kwargsrepr: optStr(headers.kwargsrepr, 'headers.kwargsrepr') ?? truncate(pyRepr(kwargs)),
    replacedTaskNesting: optInt(headers.replaced_task_nesting, 'headers.replaced_task_nesting') ?? 0,
    stampedHeaders:
      headers.stamped_headers == null
        ? null
        : list(headers.stamped_headers, 'headers.stamped_headers').map((s, i) =>
            str(s, `headers.stamped_headers[${i}]`),
          ),
    stamps: headers.stamps == null ? {} : mapping(headers.stamps, 'headers.stamps'),
    customHeaders: customHeaders(headers),
    callbacks: signatures(embed.callbacks, 'embed.callbacks'),
    errbacks: signatures(embed.errbacks, 'embed.errbacks'),
    chain: signatures(embed.chain, 'embed.chain'),
    chord: optSignature(embed.chord, 'embed.chord'),
    ...properties(raw, id),
  };
}

function decodeV1(raw: RawMessage, headers: Record<string, unknown>, body: Record<string, unknown>): TaskMessage {
  const id = str(body.id, 'body.id');
  const args = body.args == null ? [] : list(body.args, 'body.args');
  const kwargs = body.kwargs == null ? {} : mapping(body.kwargs, 'body.kwargs');
  return {
    protocol: 1,
    id,
    task: str(body.task, 'body.task'),
    args,
    kwargs,
    retries: optInt(body.retries, 'body.retries') ?? 0,
    // `utc: false` would mean local time in the sender's timezone; Smarter sends utc=true, and a naive
    // value is read as UTC as Celery does with naive values.
    eta: optDateTime(body.eta, 'body.eta'),
    expires: optDateTime(body.expires, 'body.expires'),
    timelimit: timelimit(body.timelimit, 'body.timelimit'),
    rootId: null,
    parentId: null,
    group: optStr(body.group ?? body.taskset, 'body.group'),
    groupIndex: optInt(body.group_index, 'body.group_index'),
    shadow: null,
    origin: null,
    ignoreResult: null,
    argsrepr: truncate(pyTupleRepr(args)),
    kwargsrepr: truncate(pyRepr(kwargs)),
    replacedTaskNesting: 0,
    stampedHeaders: null,
    stamps: {},
    customHeaders: customHeaders(headers),
    callbacks: signatures(body.callbacks, 'body.callbacks'),
    errbacks: signatures(body.errbacks, 'body.errbacks'),
    chain: null,
    chord: optSignature(body.chord, 'body.chord'),
    ...properties(raw, id),
  };
}

export interface DecodeOptions {
  accept: readonly Serializer[];
  /** Heaviest body taken, on the wire and decompressed; undefined or 0: no limit. */
  maxBodyBytes?: number;
}

export function decodeTaskMessage(raw: RawMessage, options: DecodeOptions): TaskMessage {
  // First of all, before the headers: an oversized message costs nothing but this comparison.
  checkBodySize(raw.withheldBodyBytes ?? raw.body.length, options.maxBodyBytes);
  if (raw.withheldBodyBytes !== undefined) {
    // Only when the broker's limit and the decoder's differ: the body is not here to decode either way.
    throw new ProtocolError(
      'PROTOCOL_CONTENT_DISALLOWED',
      'body',
      `the body is ${raw.withheldBodyBytes} bytes, over the broker's limit; it was not fetched`,
    );
  }
  const headers = headersOf(raw);
  const compression = optStr(headers.compression, 'headers.compression') ?? undefined;
  const label = {
    contentType: raw.properties.contentType,
    contentEncoding: raw.properties.contentEncoding,
    compression,
  };
  const body = decodeContent(raw.body, label, options.accept, options.maxBodyBytes);
  if (headers.task !== undefined && headers.task !== null) return decodeV2(raw, headers, body);
  if (isRecord(body) && 'task' in body) return decodeV1(raw, headers, body);
  throw new ProtocolError(
    'PROTOCOL_UNKNOWN_MESSAGE',
    'message',
    'neither a v2 `task` header nor a v1 body with `task`',
  );
}
