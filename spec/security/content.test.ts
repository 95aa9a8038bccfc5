/**
 * What gets in: bodies over the size limit (as sent, or once decompressed) and every content type not
 * accepted are refused before anything is deserialised, also when the body is compressed or msgpack.
 */
import zlib from 'node:zlib';
import { encode as msgpackEncode, ExtData } from '@msgpack/msgpack';
import { byteSize } from '../../lib/app/setting-values.js';
import { decodeTaskMessage } from '../../lib/protocol/index.js';
import type { RawMessage } from '../../lib/protocol/types.js';
import { rawMessage, refusal } from '../support/raw-message.js';

const v2 = { task: 't', id: 'i' };
const LIMIT = 64 * 1024;

const raw = (body: string | Buffer, properties: RawMessage['properties'] = {}) =>
  rawMessage(body, { headers: v2, ...properties });
const body = (args: unknown[]) => JSON.stringify([args, {}, {}]);

describe('a body over SMARTER_WORKER_MAX_BODY_SIZE is refused before it is decoded', () => {
  test('one byte over the limit is refused (content disallowed: rejected to the dead-letter queue) with its size and the limit', () => {
    const b = body(['x'.repeat(LIMIT)]);
    const e = refusal(() => decodeTaskMessage(raw(b), { accept: ['json'], maxBodyBytes: b.length - 1 }));
    expect(e.code).toBe('PROTOCOL_CONTENT_DISALLOWED');
    expect(e.message).toBe(
      `body: the body is ${b.length} bytes, over the limit of ${b.length - 1} bytes (SMARTER_WORKER_MAX_BODY_SIZE); it was not decoded`,
    );
  });

  test('a body exactly at the limit is decoded', () => {
    const b = body(['x'.repeat(LIMIT)]);
    expect(decodeTaskMessage(raw(b), { accept: ['json'], maxBodyBytes: b.length }).args).toEqual(['x'.repeat(LIMIT)]);
  });

  test('the size is checked before the headers and the body are read: broken ones over the limit get the size reason', () => {
    const e = refusal(() =>
      decodeTaskMessage(
        raw(Buffer.alloc(LIMIT + 1, 0xff), {
          headers: 'not a mapping' as unknown as Record<string, unknown>,
          contentType: 'application/x-python-serialize',
        }),
        {
          accept: ['json'],
          maxBodyBytes: LIMIT,
        },
      ),
    );
    expect(e.message).toContain(`over the limit of ${LIMIT} bytes`);
  });

  test('0 means no limit', () => {
    const b = body(['x'.repeat(LIMIT)]);
    expect(decodeTaskMessage(raw(b), { accept: ['json'], maxBodyBytes: 0 }).args).toHaveLength(1);
  });

  test.each([
    ['zlib (kombu application/x-gzip)', 'application/x-gzip', (b: Buffer) => zlib.deflateSync(b)],
    ['gzip', 'gzip', (b: Buffer) => zlib.gzipSync(b)],
    ['brotli', 'application/x-brotli', (b: Buffer) => zlib.brotliCompressSync(b)],
  ])(
    'a %s bomb (small on the wire, %s) is refused once it inflates past the limit, without inflating it whole',
    (_name, compression, pack) => {
      const inflated = Buffer.from(body(['a'.repeat(50 * 1024 * 1024)]));
      const packed = pack(inflated);
      expect(packed.length).toBeLessThan(LIMIT);
      const e = refusal(() =>
        decodeTaskMessage(raw(packed, { headers: { ...v2, compression } }), { accept: ['json'], maxBodyBytes: LIMIT }),
      );
      expect(e.code).toBe('PROTOCOL_CONTENT_DISALLOWED');
      expect(e.message).toContain(`decompresses to more than the limit of ${LIMIT} bytes`);
    },
  );

  test('a compressed body that inflates to within the limit is decoded', () => {
    const packed = zlib.deflateSync(Buffer.from(body([1, 2])));
    expect(
      decodeTaskMessage(raw(packed, { headers: { ...v2, compression: 'application/x-gzip' } }), {
        accept: ['json'],
        maxBodyBytes: LIMIT,
      }).args,
    ).toEqual([1, 2]);
  });
});

describe('every content type not accepted is refused, also compressed and as msgpack', () => {
  const all = ['json', 'msgpack', 'yaml'] as const;
  test.each([
    ['application/x-python-serialize', all],
    ['APPLICATION/X-PYTHON-SERIALIZE', all],
    ['application/data', all],
    ['text/plain', all],
    ['application/xml', all],
    ['application/json; charset=utf-8', all],
    ['application/x-msgpack', ['json'] as const],
    ['application/x-yaml', ['json'] as const],
    ['application/json', ['msgpack'] as const],
  ])('%s (accept %j) is refused by its content type, never deserialised', (contentType, accept) => {
    const e = refusal(() => decodeTaskMessage(raw(body([1]), { contentType }), { accept }));
    expect(e.code).toBe('PROTOCOL_CONTENT_DISALLOWED');
    expect(e.message).toMatch(/^properties\.content_type: /);
  });

  test('pickle inside zlib is refused by its content type before the body is inflated (a corrupt stream gives the pickle reason)', () => {
    const pickled = Buffer.from('80049505000000000000008c0173942e', 'hex');
    for (const b of [zlib.deflateSync(pickled), Buffer.from('not zlib at all')]) {
      const e = refusal(() =>
        decodeTaskMessage(
          raw(b, {
            contentType: 'application/x-python-serialize',
            headers: { ...v2, compression: 'application/x-gzip' },
          }),
          { accept: all },
        ),
      );
      expect(e.code).toBe('PROTOCOL_CONTENT_DISALLOWED');
      expect(e.message).toContain('pickle');
    }
  });

  test('msgpack inside zlib is refused when msgpack is not accepted', () => {
    const b = zlib.deflateSync(Buffer.from(msgpackEncode([[1], {}, {}])));
    const e = refusal(() =>
      decodeTaskMessage(
        raw(b, { contentType: 'application/x-msgpack', headers: { ...v2, compression: 'application/x-gzip' } }),
        { accept: ['json'] },
      ),
    );
    expect(e.code).toBe('PROTOCOL_CONTENT_DISALLOWED');
    expect(e.message).toContain('application/x-msgpack');
  });

  test("a msgpack body carrying an extension type (the sender's own type) is refused, naming the type", () => {
    const b = Buffer.from(msgpackEncode([[new ExtData(7, new Uint8Array([0x80, 0x04]))], {}, {}]));
    const e = refusal(() =>
      decodeTaskMessage(raw(b, { contentType: 'application/x-msgpack' }), { accept: ['msgpack'] }),
    );
    expect(e.code).toBe('PROTOCOL_CONTENT_DISALLOWED');
    expect(e.message).toContain('msgpack extension type 7');
  });

  test("msgpack's timestamp extension is refused too (kombu sends none): no Date reaches a task", () => {
    const b = Buffer.from(msgpackEncode([[new Date(0)], {}, {}]));
    const e = refusal(() =>
      decodeTaskMessage(raw(b, { contentType: 'application/x-msgpack' }), { accept: ['msgpack'] }),
    );
    expect(e.message).toContain('msgpack extension type -1');
  });

  test('pickled bytes inside an accepted msgpack body stay bytes: nothing unpickles them', () => {
    const pickled = Buffer.from('80049505000000000000008c0173942e', 'hex');
    const m = decodeTaskMessage(
      raw(Buffer.from(msgpackEncode([[pickled], {}, {}])), { contentType: 'application/x-msgpack' }),
      { accept: ['msgpack'] },
    );
    expect(Buffer.from(m.args[0] as Uint8Array).equals(pickled)).toBe(true);
  });
});

test('SMARTER_WORKER_MAX_BODY_SIZE reads bytes and units, and refuses what is no size', () => {
  expect(byteSize('8388608')).toBe(8388608);
  expect(byteSize('8MiB')).toBe(8 * 1024 * 1024);
  expect(byteSize('512 KB')).toBe(512_000);
  expect(byteSize('1.5kib')).toBe(1536);
  expect(byteSize('0')).toBe(0);
  for (const bad of ['', 'lots', '-1', '8 parsecs', '1e3']) {
    expect(() => byteSize(bad)).toThrow(/expected a size in bytes/);
  }
});
