/**
 * amqplib 2.3.1 reads only the field types of RabbitMQ's errata list, and throws on any other tag inside
 * the frame parser, which closes the whole connection. Python's py-amqp writes an integer beyond 32 bits
 * as `L` (signed 64), so one ordinary Celery message (`headers={'ts_ms': 1733000000000}`) used to stop the
 * worker. This module is a codec extension, not a patched node_modules: a complete field-table decoder
 * (RabbitMQ's tags and py-amqp's) that replaces amqplib's `decodeFields` before amqplib's protocol
 * definitions bind it. It must be imported before `amqplib` (`./amqplib.ts` does that), and it checks
 * itself on load: if amqplib was loaded first, or a new amqplib changed its internals, it throws at once.
 *
 * Values are read faithfully to their range: 64-bit integers beyond 2^53 become `bigint`; each table
 * remembers its wire types (see field-types.ts) so floats are written back as floats. A tag nobody
 * defines no longer kills the connection: the table keeps what was read before it and carries a
 * `FIELD_ERROR` that the message decoder turns into a refusal (dead-letter with the key and tag).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setFieldError, setFieldTypes } from '../../protocol/field-types.js';

function int64(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

class UnknownTag extends Error {
  constructor(readonly tag: string) {
    super(`unknown AMQP field type tag ${JSON.stringify(tag)}`);
  }
}

/**
 * Where `readValue` stopped and the tag it read: module state rather than a result object, which cost an
 * allocation per header of every message (decoding is synchronous, so nothing interleaves).
 */
let readTag = '';
let readNext = 0;

/** Reads one tagged value at `offset`; returns it, leaving its tag in `readTag` and the offset after it in `readNext`. */
function readValue(buf: Buffer, offset: number): unknown {
  const tag = String.fromCharCode(buf[offset] ?? 0);
  let o = offset + 1;
  let value: unknown;
  switch (tag) {
    case 't':
      value = buf.readUInt8(o) !== 0;
      o += 1;
      break;
    case 'b': // RabbitMQ and amqplib: signed (py-amqp reads it unsigned, but never writes it)
      value = buf.readInt8(o);
      o += 1;
      break;
    case 'B':
      value = buf.readUInt8(o);
      o += 1;
      break;
    case 's': // RabbitMQ: signed 16 (py-amqp reads a short string, but never writes it)
    case 'U': // py-amqp and Qpid: signed 16
      value = buf.readInt16BE(o);
      o += 2;
      break;
    case 'u':
      value = buf.readUInt16BE(o);
      o += 2;
      break;
    case 'I':
      value = buf.readInt32BE(o);
      o += 4;
      break;
    case 'i':
      value = buf.readUInt32BE(o);
      o += 4;
      break;
    case 'l': // RabbitMQ: signed 64
    case 'L': // py-amqp: signed 64 (any int outside ±(2^31 − 1))
      value = int64(buf.readBigInt64BE(o));
      o += 8;
      break;
    case 'f':
      value = buf.readFloatBE(o);
      o += 4;
      break;
    case 'd':
      value = buf.readDoubleBE(o);
      o += 8;
      break;
    case 'D': {
      // amqplib's representation, so that a copy is written with the same bytes.
      const places = buf.readUInt8(o);
      const digits = buf.readUInt32BE(o + 1);
      value = { '!': 'decimal', value: { places, digits } };
      o += 5;
      break;
    }
    case 'T':
      value = { '!': 'timestamp', value: Number(buf.readBigUInt64BE(o)) };
      o += 8;
      break;
    case 'S': {
      const len = buf.readUInt32BE(o);
      o += 4;
      value = buf.toString('utf8', o, o + len);
      o += len;
      break;
    }
    case 'x': {
      const len = buf.readUInt32BE(o);
      o += 4;
      value = Buffer.from(buf.subarray(o, o + len));
      o += len;
      break;
    }
    case 'V':
      value = null;
      break;
    case 'F': {
      const len = buf.readUInt32BE(o);
      o += 4;
      value = decodeFields(buf.subarray(o, o + len));
      o += len;
      break;
    }
    case 'A': {
      const len = buf.readUInt32BE(o);
      o += 4;
      value = decodeArray(buf.subarray(o, o + len));
      o += len;
      break;
    }
    default:
      throw new UnknownTag(tag);
  }
  if (o > buf.length) throw new RangeError(`AMQP field value of type ${tag} runs past the end of its table`);
  readTag = tag;
  readNext = o;
  return value;
}

function decodeArray(slice: Buffer): unknown[] {
  const out: unknown[] = [];
  const types: Record<string, string> = {};
  let offset = 0;
  while (offset < slice.length) {
    try {
      const value = readValue(slice, offset);
      types[String(out.length)] = readTag;
      out.push(value);
      offset = readNext;
    } catch (err) {
      if (!(err instanceof UnknownTag)) throw err;
      setFieldError(out, { key: `[${out.length}]`, tag: err.tag });
      break;
    }
  }
  setFieldTypes(out, types);
  return out;
}

/**
 * A message's header keys are the same, in the same order, in every message of a producer: the key read
 * last at each position is compared byte by byte before decoding one (decoding the keys was a third of
 * the table's cost). A different key only costs the comparison of its first bytes.
 */
const keyCache: Array<{ bytes: Uint8Array; text: string } | undefined> = [];
const KEY_CACHE_POSITIONS = 64;
const KEY_CACHE_MAX_BYTES = 32;

function readKey(buf: Buffer, start: number, len: number, position: number): string {
  const cached = keyCache[position];
  if (cached !== undefined && cached.bytes.length === len) {
    let i = 0;
    while (i < len && buf[start + i] === cached.bytes[i]) i++;
    if (i === len) return cached.text;
  }
  const text = buf.toString('utf8', start, start + len);
  if (position < KEY_CACHE_POSITIONS && len <= KEY_CACHE_MAX_BYTES) {
    keyCache[position] = { bytes: Uint8Array.prototype.slice.call(buf, start, start + len), text };
  }
  return text;
}

/** A field table's body (without its length prefix), as amqplib's `decodeFields` takes it. */
export function decodeFields(slice: Buffer): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const types: Record<string, string> = {};
  let offset = 0;
  for (let position = 0; offset < slice.length; position++) {
    const keyLen = slice.readUInt8(offset);
    const key = readKey(slice, offset + 1, keyLen, position);
    offset += 1 + keyLen;
    try {
      const value = readValue(slice, offset);
      out[key] = value;
      types[key] = readTag;
      offset = readNext;
    } catch (err) {
      if (!(err instanceof UnknownTag)) throw err;
      // The rest of the table cannot be located; keep what was read and say where it stopped.
      setFieldError(out, { key, tag: err.tag });
      break;
    }
  }
  setFieldTypes(out, types);
  return out;
}

interface AmqplibCodec {
  decodeFields: (slice: Buffer) => Record<string, unknown>;
}
interface AmqplibDefs {
  decode: (id: number, buf: Buffer) => { headers?: Record<string, unknown> };
}

/** A BasicProperties payload carrying one header `L` = 2^40, decoded through amqplib's own path. */
function selfTest(defs: AmqplibDefs): boolean {
  const key = Buffer.from('probe');
  const table = Buffer.concat([Buffer.from([key.length]), key, Buffer.from('L'), Buffer.alloc(8)]);
  table.writeBigInt64BE(2n ** 40n, key.length + 2);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(table.length);
  const flags = Buffer.from([0x20, 0x00]); // headers present
  try {
    return defs.decode(60, Buffer.concat([flags, len, table])).headers?.probe === 2 ** 40;
  } catch {
    return false;
  }
}

function install(): void {
  const require = createRequire(import.meta.url);
  // Deep paths are outside amqplib's `exports`; an absolute path is the same module instance it loads.
  const lib = join(dirname(require.resolve('amqplib')), 'lib');
  const codec = require(join(lib, 'codec.js')) as AmqplibCodec;
  codec.decodeFields = decodeFields;
  const defs = require(join(lib, 'defs.js')) as AmqplibDefs;
  if (!selfTest(defs)) {
    throw new Error(
      'the AMQP field-table codec extension is not in effect: amqplib was loaded before lib/broker/amqp/amqp-codec.ts, ' +
        'or its internals changed (it is written for amqplib 2.3); import amqplib through lib/broker/amqp/amqplib.ts',
    );
  }
}

install();
