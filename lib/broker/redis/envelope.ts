/**
 * kombu's Redis message envelope (kombu/transport/virtual/base.py `prepare_message` and
 * `_inplace_augment_message`): a JSON object with the body base64-encoded, its headers, and the AMQP-like
 * properties including `delivery_info` and a `delivery_tag` (a uuid4 string). This is the one decoder of it.
 */
import { randomUUID } from 'node:crypto';
import { ProtocolError } from '../../errors.js';
import type { PublishProperties } from '../../protocol/encode.js';
import { stringifyKombuJson } from '../../protocol/json.js';
import type { RawMessage } from '../../protocol/types.js';

export interface Envelope {
  raw: RawMessage;
  deliveryTag: string;
  exchange: string;
  routingKey: string;
  redelivered: boolean;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function optString(o: Obj, key: string, where: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') {
    throw new ProtocolError('PROTOCOL_INVALID', `${where}.${key}`, `expected a string, got ${typeof v}`);
  }
  return v;
}

/** Parses one envelope as it sits in a Redis list (or in the `unacked` hash, as its first element). */
export function decodeEnvelope(text: string): Envelope {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ProtocolError('PROTOCOL_DECODE', 'redis envelope', `not JSON (${(err as Error).message})`, {
      cause: err,
    });
  }
  return envelopeFrom(parsed);
}

export function envelopeFrom(parsed: unknown): Envelope {
  if (!isObj(parsed)) throw new ProtocolError('PROTOCOL_INVALID', 'redis envelope', 'expected a JSON object');
  const props = parsed.properties ?? {};
  if (!isObj(props)) throw new ProtocolError('PROTOCOL_INVALID', 'redis envelope.properties', 'expected an object');
  const info = props.delivery_info ?? {};
  if (!isObj(info)) {
    throw new ProtocolError('PROTOCOL_INVALID', 'redis envelope.properties.delivery_info', 'expected an object');
  }
  const headers = parsed.headers ?? {};
  if (!isObj(headers)) throw new ProtocolError('PROTOCOL_INVALID', 'redis envelope.headers', 'expected an object');

  const encoding = optString(props, 'body_encoding', 'redis envelope.properties');
  const bodyText = parsed.body;
  let body: Buffer;
  if (typeof bodyText !== 'string') {
    throw new ProtocolError(
      'PROTOCOL_INVALID',
      'redis envelope.body',
      `expected a string, got ${bodyText === null ? 'null' : typeof bodyText}`,
    );
  } else if (encoding === 'base64') {
    if (!/^[A-Za-z0-9+/\r\n]*={0,2}[\r\n]*$/.test(bodyText)) {
      throw new ProtocolError(
        'PROTOCOL_DECODE',
        'redis envelope.body',
        'body_encoding is base64 but the body is not base64',
      );
    }
    body = Buffer.from(bodyText, 'base64');
  } else if (encoding === undefined) {
    body = Buffer.from(bodyText, 'utf8');
  } else {
    throw new ProtocolError(
      'PROTOCOL_DECODE',
      'redis envelope.properties.body_encoding',
      `unknown body encoding ${JSON.stringify(encoding)}`,
    );
  }

  const priority = props.priority;
  const deliveryMode = props.delivery_mode;
  const raw: RawMessage = {
    body,
    properties: {
      contentType: optString(parsed, 'content-type', 'redis envelope'),
      contentEncoding: optString(parsed, 'content-encoding', 'redis envelope'),
      correlationId: optString(props, 'correlation_id', 'redis envelope.properties'),
      replyTo: optString(props, 'reply_to', 'redis envelope.properties'),
      priority: typeof priority === 'number' ? priority : undefined,
      deliveryMode: typeof deliveryMode === 'number' ? deliveryMode : undefined,
      expiration: optString(props, 'expiration', 'redis envelope.properties'),
      messageId: optString(props, 'message_id', 'redis envelope.properties'),
      timestamp: typeof props.timestamp === 'number' ? props.timestamp : undefined,
      type: optString(props, 'type', 'redis envelope.properties'),
      appId: optString(props, 'app_id', 'redis envelope.properties'),
      userId: optString(props, 'user_id', 'redis envelope.properties'),
      headers,
    },
  };
  return {
    raw,
    deliveryTag: optString(props, 'delivery_tag', 'redis envelope.properties') ?? '',
    exchange: optString(info, 'exchange', 'redis envelope.properties.delivery_info') ?? '',
    routingKey: optString(info, 'routing_key', 'redis envelope.properties.delivery_info') ?? '',
    redelivered: info.redelivered === true || headers.redelivered === true,
  };
}

/**
 * Builds the envelope kombu would put in Redis for this publish: same keys in the same order, the body in
 * base64, a fresh uuid4 delivery tag. Serialised with Python's separators so it matches kombu's bytes.
 */
export function encodeEnvelope(
  body: Buffer,
  p: PublishProperties,
  exchange: string,
  routingKey: string,
  deliveryTag: string = randomUUID(),
): { text: string; deliveryTag: string; object: Obj } {
  const properties: Obj = {};
  if (p.correlationId !== undefined) properties.correlation_id = p.correlationId;
  if (p.replyTo !== undefined) properties.reply_to = p.replyTo;
  properties.delivery_mode = p.deliveryMode;
  if (p.expiration !== undefined) properties.expiration = p.expiration;
  const x = p.passthrough;
  if (x?.messageId !== undefined) properties.message_id = x.messageId;
  if (x?.timestamp !== undefined) properties.timestamp = x.timestamp;
  if (x?.type !== undefined) properties.type = x.type;
  if (x?.appId !== undefined) properties.app_id = x.appId;
  if (x?.userId !== undefined) properties.user_id = x.userId;
  properties.delivery_info = { exchange, routing_key: routingKey };
  properties.priority = p.priority;
  properties.body_encoding = 'base64';
  properties.delivery_tag = deliveryTag;
  const object: Obj = {
    body: body.toString('base64'),
    'content-encoding': p.contentEncoding,
    'content-type': p.contentType,
    headers: p.headers,
    properties,
  };
  return { text: stringifyKombuJson(object), deliveryTag, object };
}
