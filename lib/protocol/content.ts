/**
 * Message bodies: decompression by the `compression` header, then deserialisation by content type.
 * JSON, msgpack and YAML (safe schema) are accepted when the worker's `accept` list allows them;
 * pickle is always refused, whatever the configuration: running it is running the sender's code.
 */
import zlib from 'node:zlib';
import { decode as msgpackDecode } from '@msgpack/msgpack';
import yaml from 'js-yaml';
import { ProtocolError } from '../errors.js';
import { parseKombuJson, stringifyKombuJson } from './json.js';

export type Serializer = 'json' | 'msgpack' | 'yaml';

export const CONTENT_TYPES: Record<Serializer, string> = {
  json: 'application/json',
  msgpack: 'application/x-msgpack',
  yaml: 'application/x-yaml',
};

const PICKLE = 'application/x-python-serialize';

function serializerFor(contentType: string): Serializer | 'pickle' | undefined {
  switch (contentType.toLowerCase()) {
    case 'application/json':
      return 'json';
    case 'application/x-msgpack':
    case 'application/msgpack':
      return 'msgpack';
    case 'application/x-yaml':
    case 'application/yaml':
      return 'yaml';
    case PICKLE:
      return 'pickle';
    default:
      return undefined;
  }
}

function decompress(body: Buffer, compression: string): Buffer {
  try {
    switch (compression.toLowerCase()) {
      // kombu labels its zlib codec `application/x-gzip`, but the stream is RFC 1950 zlib, not gzip.
      case 'application/x-gzip':
      case 'zlib':
      case 'gzip':
        return body[0] === 0x1f && body[1] === 0x8b ? zlib.gunzipSync(body) : zlib.inflateSync(body);
      case 'application/x-brotli':
      case 'brotli':
        return zlib.brotliDecompressSync(body);
      default:
        throw new ProtocolError(
          'PROTOCOL_CONTENT_DISALLOWED',
          'headers.compression',
          `unsupported compression ${JSON.stringify(compression)} (supported: application/x-gzip, application/x-brotli)`,
        );
    }
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    throw new ProtocolError('PROTOCOL_DECODE', 'body', `cannot decompress ${compression} body`, { cause: err });
  }
}

export interface ContentLabel {
  contentType: string | undefined;
  contentEncoding: string | undefined;
  compression: string | undefined;
}

/** Decodes a body to an `unknown` value, or throws a `ProtocolError` that says what was wrong. */
export function decodeContent(body: Buffer, label: ContentLabel, accept: readonly Serializer[]): unknown {
  const contentType = label.contentType ?? 'application/json';
  const serializer = serializerFor(contentType);
  if (serializer === 'pickle') {
    throw new ProtocolError(
      'PROTOCOL_CONTENT_DISALLOWED',
      'properties.content_type',
      `refusing ${PICKLE} (pickle): deserialising it would run code chosen by the sender`,
    );
  }
  if (serializer === undefined || !accept.includes(serializer)) {
    throw new ProtocolError(
      'PROTOCOL_CONTENT_DISALLOWED',
      'properties.content_type',
      `content type ${JSON.stringify(contentType)} is not accepted (accepted: ${accept.map((s) => CONTENT_TYPES[s]).join(', ')})`,
    );
  }
  const raw = label.compression ? decompress(body, label.compression) : body;
  try {
    switch (serializer) {
      case 'json':
        return parseKombuJson(raw.toString('utf8'));
      case 'msgpack':
        return msgpackDecode(raw);
      case 'yaml':
        return yaml.load(raw.toString('utf8'), { schema: yaml.CORE_SCHEMA });
    }
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ProtocolError('PROTOCOL_DECODE', 'body', `cannot decode ${contentType} body: ${reason}`, { cause: err });
  }
}

export interface EncodedContent {
  body: Buffer;
  contentType: string;
  contentEncoding: string;
}

export function encodeContent(value: unknown): EncodedContent {
  return { body: Buffer.from(stringifyKombuJson(value), 'utf8'), contentType: 'application/json', contentEncoding: 'utf-8' };
}
