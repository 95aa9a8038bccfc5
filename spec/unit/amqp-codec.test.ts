/**
 * The field-table codec extension: every field type RabbitMQ and py-amqp write is read
 * faithfully, wire types are remembered for the copy, and a tag nobody defines stops only its own table.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { decodeFields } from '../../lib/broker/amqp/amqp-codec.js';
import { toAmqpTable } from '../../lib/broker/amqp/amqp-table.js';
import { extendTable, fieldErrorOf, fieldTypesOf } from '../../lib/protocol/field-types.js';

const amqpCodec = createRequire(import.meta.url)(path.resolve('node_modules/amqplib/lib/codec.js')) as {
  encodeTable(b: Buffer, v: unknown, o: number): number;
  decodeFields: (b: Buffer) => Record<string, unknown>;
};

/** One table entry: key, tag, value bytes. */
function entry(key: string, tag: string, value: Buffer): Buffer {
  return Buffer.concat([Buffer.from([key.length]), Buffer.from(key), Buffer.from(tag), value]);
}
const be = (bytes: number, write: (b: Buffer) => void) => {
  const b = Buffer.alloc(bytes);
  write(b);
  return b;
};
/** A fixed-size entry: key, tag, and the bytes `write` puts in a buffer of `bytes`. */
const num = (key: string, tag: string, bytes: number, write: (b: Buffer) => void) => entry(key, tag, be(bytes, write));

test('amqplib itself now decodes with the extension (installed on import)', () => {
  expect(amqpCodec.decodeFields).toBe(decodeFields);
});

test('py-amqp L (signed 64): safe integers as numbers, beyond 2^53 as bigint, negative ones intact', () => {
  const t = decodeFields(
    Buffer.concat([
      num('ts_ms', 'L', 8, (b) => b.writeBigInt64BE(1733000000000n)),
      num('neg', 'L', 8, (b) => b.writeBigInt64BE(-2147483648n)),
      num('huge', 'L', 8, (b) => b.writeBigInt64BE(2n ** 62n + 1n)),
      num('rabbit', 'l', 8, (b) => b.writeBigInt64BE(-5n)),
    ]),
  );
  expect(t).toEqual({ ts_ms: 1733000000000, neg: -2147483648, huge: 2n ** 62n + 1n, rabbit: -5 });
  expect(fieldTypesOf(t)).toEqual({ ts_ms: 'L', neg: 'L', huge: 'L', rabbit: 'l' });
});

test('every other RabbitMQ and py-amqp type: ints of each width and sign, floats, strings, bytes, void, nesting', () => {
  const inner = num('x', 'I', 4, (b) => b.writeInt32BE(-7));
  const arr = Buffer.concat([Buffer.from('d'), be(8, (b) => b.writeDoubleBE(2.5)), Buffer.from('t'), Buffer.from([1])]);
  const t = decodeFields(
    Buffer.concat([
      num('b', 'b', 1, (b) => b.writeInt8(-1)),
      num('B', 'B', 1, (b) => b.writeUInt8(255)),
      num('s', 's', 2, (b) => b.writeInt16BE(-300)),
      num('U', 'U', 2, (b) => b.writeInt16BE(-301)),
      num('u', 'u', 2, (b) => b.writeUInt16BE(65535)),
      num('I', 'I', 4, (b) => b.writeInt32BE(-2)),
      num('i', 'i', 4, (b) => b.writeUInt32BE(4294967295)),
      num('f', 'f', 4, (b) => b.writeFloatBE(0.5)),
      num('d', 'd', 8, (b) => b.writeDoubleBE(1e20)),
      entry('D', 'D', Buffer.from([2, 0, 0, 1, 0])),
      num('T', 'T', 8, (b) => b.writeBigUInt64BE(1733000000n)),
      entry('S', 'S', Buffer.concat([be(4, (b) => b.writeUInt32BE(2)), Buffer.from('é')])),
      entry('x', 'x', Buffer.concat([be(4, (b) => b.writeUInt32BE(2)), Buffer.from([0xff, 0x00])])),
      entry('V', 'V', Buffer.alloc(0)),
      entry('t', 't', Buffer.from([0])),
      entry('F', 'F', Buffer.concat([be(4, (b) => b.writeUInt32BE(inner.length)), inner])),
      entry('A', 'A', Buffer.concat([be(4, (b) => b.writeUInt32BE(arr.length)), arr])),
    ]),
  );
  expect(t).toEqual({
    b: -1,
    B: 255,
    s: -300,
    U: -301,
    u: 65535,
    I: -2,
    i: 4294967295,
    f: 0.5,
    d: 1e20,
    D: { '!': 'decimal', value: { places: 2, digits: 256 } },
    T: { '!': 'timestamp', value: 1733000000 },
    S: 'é',
    x: Buffer.from([0xff, 0x00]),
    V: null,
    t: false,
    F: { x: -7 },
    A: [2.5, true],
  });
  expect(fieldTypesOf(t.A as object)).toEqual({ 0: 'd', 1: 't' });
});

test('an unknown tag keeps the entries before it and marks the table, instead of throwing', () => {
  const t = decodeFields(
    Buffer.concat([num('ok', 'I', 4, (b) => b.writeInt32BE(1)), entry('bad', 'Z', Buffer.alloc(3))]),
  );
  expect(t).toEqual({ ok: 1 });
  expect(fieldErrorOf(t)).toEqual({ key: 'bad', tag: 'Z' });
});

test('a decoded table encodes back as it came: floats stay floats, 64-bit stays 64-bit, extra headers added', () => {
  const original = decodeFields(
    Buffer.concat([
      num('big_float', 'd', 8, (b) => b.writeDoubleBE(1e20)),
      num('whole', 'd', 8, (b) => b.writeDoubleBE(3)),
      num('single', 'f', 4, (b) => b.writeFloatBE(2)),
      num('ts', 'L', 8, (b) => b.writeBigInt64BE(1733000000000n)),
      num('huge', 'L', 8, (b) => b.writeBigInt64BE(2n ** 62n + 1n)),
    ]),
  );
  const buf = Buffer.alloc(1024);
  const len = amqpCodec.encodeTable(buf, toAmqpTable(extendTable(original, { reason: 'x', whole: 4 })), 0);
  const back = decodeFields(buf.subarray(4, len));
  expect(back).toEqual({ big_float: 1e20, whole: 4, single: 2, ts: 1733000000000, huge: 2n ** 62n + 1n, reason: 'x' });
  // `whole` was replaced by an integer: it goes as one; the others keep their float types.
  expect(fieldTypesOf(back)).toEqual({ big_float: 'd', whole: 'I', single: 'f', ts: 'l', huge: 'l', reason: 'S' });
});

test('an integral number beyond int64 (no remembered type) is sent as a double, never a throwing int64', () => {
  const buf = Buffer.alloc(64);
  const len = amqpCodec.encodeTable(buf, toAmqpTable({ v: 1e20 }), 0);
  expect(fieldTypesOf(decodeFields(buf.subarray(4, len)))).toEqual({ v: 'd' });
});

test('keys read from the cache of the last table are the bytes of this one: same length, same prefix, other position', () => {
  const v = Buffer.from([1]);
  const first = decodeFields(Buffer.concat([entry('task', 'B', v), entry('lang', 'B', v), entry('ida', 'B', v)]));
  expect(Object.keys(first)).toEqual(['task', 'lang', 'ida']);
  // Same lengths at the same positions, other bytes (the last differs in one byte only), then swapped order.
  const second = decodeFields(Buffer.concat([entry('tasK', 'B', v), entry('lang', 'B', v), entry('idb', 'B', v)]));
  expect(Object.keys(second)).toEqual(['tasK', 'lang', 'idb']);
  const third = decodeFields(Buffer.concat([entry('lang', 'B', v), entry('task', 'B', v)]));
  expect(third).toEqual({ lang: 1, task: 1 });
  expect(fieldTypesOf(third)).toEqual({ lang: 'B', task: 'B' });
});
