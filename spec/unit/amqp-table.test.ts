import { createRequire } from 'node:module';
import path from 'node:path';
import { toAmqpTable } from '../../lib/broker/amqp/amqp-table.js';

// amqplib's own field-table codec (not exported, so loaded by path): the bytes it would put on the wire.
const amqpCodec = createRequire(import.meta.url)(path.resolve('node_modules/amqplib/lib/codec.js')) as {
  encodeTable(b: Buffer, v: unknown, o: number): number;
};

/** Reads the type tag amqplib writes for each header, to check what py-amqp will see. */
function tags(table: Record<string, unknown>): Record<string, string> {
  const buf = Buffer.alloc(4096);
  const len = amqpCodec.encodeTable(buf, table, 0);
  const out: Record<string, string> = {};
  let off = 4;
  while (off < len) {
    const klen = buf[off] ?? 0;
    const key = buf.toString('utf8', off + 1, off + 1 + klen);
    off += 1 + klen;
    const tag = String.fromCharCode(buf[off] ?? 0);
    out[key] = tag;
    off += 1;
    const sizes: Record<string, number> = { b: 1, s: 2, I: 4, l: 8, t: 1, V: 0, d: 8 };
    if (tag === 'S') off += 4 + buf.readUInt32BE(off);
    else if (tag === 'A' || tag === 'F') off += 4 + buf.readUInt32BE(off);
    else off += sizes[tag] ?? 0;
  }
  return out;
}

describe('integer headers are encoded as py-amqp reads them', () => {
  test('small integers become int32 (I), never b or s', () => {
    const t = tags(toAmqpTable({ retries: 0, clock: 200, group_index: 300, neg: -1 }));
    expect(t).toEqual({ retries: 'I', clock: 'I', group_index: 'I', neg: 'I' });
  });

  test('integers beyond int32 become int64 (l); floats stay doubles; null is V', () => {
    const t = tags(toAmqpTable({ big: 2 ** 40, f: 1.5, n: null, s: 'x', b: true }));
    expect(t).toEqual({ big: 'l', f: 'd', n: 'V', s: 'S', b: 't' });
  });

  test('amqplib alone would write b and s for the same values (the hazard we avoid)', () => {
    expect(tags({ retries: 0, clock: 200 })).toEqual({ retries: 'b', clock: 's' });
  });
});
