/**
 * Message bodies: decompression by the `compression` header, then deserialisation by content type.
 * JSON, msgpack and YAML (safe schema) are accepted when the worker's `accept` list allows them;
 * pickle is always refused, whatever the configuration: running it is running the sender's code.
 */
import { createRequire } from 'node:module';
import zlib from 'node:zlib';
import type * as Msgpack from '@msgpack/msgpack';
import type { ExtensionCodecType } from '@msgpack/msgpack';
import type * as JsYaml from 'js-yaml';
import { ProtocolError } from '../errors.js';
import { parseKombuJson, stringifyKombuJson } from './json.js';
import { checkEncodingName, decodeText } from './text.js';

export type Serializer = 'json' | 'msgpack' | 'yaml';

export const CONTENT_TYPES: Record<Serializer, string> = {
  json: 'application/json',
  msgpack: 'application/x-msgpack',
  yaml: 'application/x-yaml',
};

const PICKLE = 'application/x-python-serialize';

// Loaded with the first msgpack or YAML body: Celery sends JSON unless told otherwise, and the two parsers
// are ~160 KB for every start-up to compile.
const load = createRequire(import.meta.url);
let msgpack: typeof Msgpack | undefined;
let jsYaml: typeof JsYaml | undefined;
const msgpackDecode: typeof Msgpack.decode = (data, options) =>
  (msgpack ??= load('@msgpack/msgpack') as typeof Msgpack).decode(data, options);
const yaml = (): typeof JsYaml => (jsYaml ??= load('js-yaml') as typeof JsYaml);

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

/** Default for `maxBytes`: what a body may weigh, on the wire and once decompressed. */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Refuses a body heavier than the limit, before a byte of it is read (the same reason on every broker). */
export function checkBodySize(size: number, maxBytes: number | undefined, what = 'the body'): void {
  if (maxBytes === undefined || maxBytes <= 0 || size <= maxBytes) return;
  throw new ProtocolError(
    'PROTOCOL_CONTENT_DISALLOWED',
    'body',
    `${what} is ${size} bytes, over the limit of ${maxBytes} bytes (SMARTER_WORKER_MAX_BODY_SIZE); it was not decoded`,
  );
}

function decompress(body: Buffer, compression: string, maxBytes: number | undefined): Buffer {
  // A few KB of zlib can inflate to gigabytes: the output is capped at the same limit as the body.
  const cap = maxBytes !== undefined && maxBytes > 0 ? { maxOutputLength: maxBytes + 1 } : {};
  const capped = (out: Buffer) => {
    checkBodySize(out.length, maxBytes, 'the decompressed body');
    return out;
  };
  try {
    switch (compression.toLowerCase()) {
      // kombu labels its zlib codec `application/x-gzip`, but the stream is RFC 1950 zlib, not gzip.
      case 'application/x-gzip':
      case 'zlib':
      case 'gzip':
        return capped(body[0] === 0x1f && body[1] === 0x8b ? zlib.gunzipSync(body, cap) : zlib.inflateSync(body, cap));
      case 'application/x-brotli':
      case 'brotli':
        return capped(zlib.brotliDecompressSync(body, cap));
      default:
        throw new ProtocolError(
          'PROTOCOL_CONTENT_DISALLOWED',
          'headers.compression',
          `unsupported compression ${JSON.stringify(compression)} (supported: application/x-gzip, application/x-brotli)`,
        );
    }
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new ProtocolError(
        'PROTOCOL_CONTENT_DISALLOWED',
        'body',
        `the ${compression} body decompresses to more than the limit of ${maxBytes} bytes (SMARTER_WORKER_MAX_BODY_SIZE); it was not decoded`,
      );
    }
    throw new ProtocolError('PROTOCOL_DECODE', 'body', `cannot decompress ${compression} body`, { cause: err });
  }
}

/**
 * msgpack extension types are the sender's own data types: kombu's msgpack serializer sends none, and an
 * unknown one would reach a task as an opaque object (the timestamp type as a Date). Refused by number.
 */
const NO_EXTENSIONS: ExtensionCodecType<undefined> = {
  tryToEncode: () => null,
  decode: (_data, type) => {
    throw new ProtocolError(
      'PROTOCOL_CONTENT_DISALLOWED',
      'body',
      `msgpack extension type ${type} is not accepted (kombu's msgpack sends none)`,
    );
  },
};

export interface ContentLabel {
  contentType: string | undefined;
  contentEncoding: string | undefined;
  compression: string | undefined;
}

/**
 * Deepest nesting of lists and mappings a body may have. Python's own json refuses about 1,000 levels
 * (RecursionError, a decode error for Celery); anything near that would overflow our stack later, in the
 * repr or the argument checks, inside the task instead of at the door.
 */
export const MAX_NESTING = 256;

function isContainer(v: unknown): v is object {
  if (Array.isArray(v)) return true;
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Throws when a list or mapping sits deeper than `MAX_NESTING`; iterative, so any depth can be measured. */
function checkNesting(value: unknown): void {
  if (!isContainer(value)) return;
  // Two parallel stacks rather than a [value, depth] pair per container: every body is checked.
  const values: object[] = [value];
  const depths: number[] = [1];
  for (let v = values.pop(); v !== undefined; v = values.pop()) {
    const depth = depths.pop() ?? 1;
    if (depth > MAX_NESTING) {
      throw new ProtocolError(
        'PROTOCOL_DECODE',
        'body',
        `lists and mappings are nested deeper than ${MAX_NESTING} levels`,
      );
    }
    for (const child of Array.isArray(v) ? (v as unknown[]) : Object.values(v)) {
      if (isContainer(child)) {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
}

/** Decodes a body to an `unknown` value, or throws a `ProtocolError` that says what was wrong. */
export function decodeContent(
  body: Buffer,
  label: ContentLabel,
  accept: readonly Serializer[],
  maxBytes?: number,
): unknown {
  const contentType = label.contentType;
  if (contentType === undefined || contentType.trim() === '') {
    // kombu reads a missing type as application/data, which no worker accepts.
    throw new ProtocolError(
      'PROTOCOL_CONTENT_DISALLOWED',
      'properties.content_type',
      'the message has no content type',
    );
  }
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
  checkBodySize(body.length, maxBytes);
  const raw = label.compression ? decompress(body, label.compression, maxBytes) : body;
  // msgpack is binary whatever its label says; JSON and YAML are text in their declared encoding.
  if (serializer === 'msgpack') checkEncodingName(label.contentEncoding);
  const text = serializer === 'msgpack' ? '' : decodeText(raw, label.contentEncoding);
  let value: unknown;
  try {
    switch (serializer) {
      case 'json':
        value = parseKombuJson(text);
        break;
      case 'msgpack':
        value = msgpackDecode(raw, { extensionCodec: NO_EXTENSIONS });
        break;
      case 'yaml':
        value = yaml().load(text, { schema: yaml().CORE_SCHEMA });
        break;
    }
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    throw new ProtocolError('PROTOCOL_DECODE', 'body', `cannot decode ${contentType} body: ${reason}`, { cause: err });
  }
  checkNesting(value);
  return value;
}

export interface EncodedContent {
  body: Buffer;
  contentType: string;
  contentEncoding: string;
}

export function encodeContent(value: unknown): EncodedContent {
  return {
    body: Buffer.from(stringifyKombuJson(value), 'utf8'),
    contentType: 'application/json',
    contentEncoding: 'utf-8',
  };
}
