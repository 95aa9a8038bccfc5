/** The decoder refuses what Celery refuses, and reads a declared encoding faithfully. */
import { MAX_NESTING, decodeContent } from '../../lib/protocol/content.js';
import { decodeTaskMessage } from '../../lib/protocol/index.js';
import { refusal } from '../support/raw-message.js';

const accept = ['json' as const, 'msgpack' as const];
const json = (contentEncoding?: string) => ({
  contentType: 'application/json',
  contentEncoding,
  compression: undefined,
});

test('a body that is not valid UTF-8 is a decode error, not a text with U+FFFD', () => {
  const body = Buffer.concat([Buffer.from('[["'), Buffer.from([0xc3, 0x28]), Buffer.from('"], {}, {}]')]);
  expect(refusal(() => decodeContent(body, json('utf-8'), accept))).toMatchObject({
    code: 'PROTOCOL_DECODE',
    message: 'body: the body is not valid utf-8',
  });
  expect(refusal(() => decodeContent(body, json(undefined), accept)).message).toMatch(
    /not valid utf-8 \(no content_encoding/,
  );
});

test('a declared utf-16 body is decoded as kombu decodes it (with or without a byte-order mark, either order)', () => {
  const text = '[["héllo ✓"], {}, {}]';
  const le = Buffer.from(text, 'utf16le');
  const bomLe = Buffer.concat([Buffer.from([0xff, 0xfe]), le]);
  const be = Buffer.from(le).swap16();
  const bomBe = Buffer.concat([Buffer.from([0xfe, 0xff]), be]);
  for (const [body, enc] of [
    [le, 'utf-16'],
    [bomLe, 'UTF-16'],
    [bomBe, 'utf_16'],
    [be, 'utf-16-be'],
    [le, 'utf-16le'],
  ] as const) {
    expect(decodeContent(body, json(enc), accept)).toEqual([['héllo ✓'], {}, {}]);
  }
  expect(decodeContent(Buffer.from('["\xe9"]', 'latin1'), json('latin-1'), accept)).toEqual(['é']);
});

test('an unknown content_encoding is refused by name, for text and binary bodies alike', () => {
  const e = refusal(() => decodeContent(Buffer.from('[[], {}, {}]'), json('nonsense'), accept));
  expect(e).toMatchObject({ code: 'PROTOCOL_DECODE' });
  expect(e.message).toMatch(
    /^properties.content_encoding: unsupported content_encoding "nonsense" \(supported: utf-8, utf-16/,
  );
  const m = refusal(() =>
    decodeContent(
      Buffer.from([0x90]),
      { contentType: 'application/x-msgpack', contentEncoding: 'nonsense', compression: undefined },
      accept,
    ),
  );
  expect(m.code).toBe('PROTOCOL_DECODE');
  expect(
    decodeContent(
      Buffer.from([0x90]),
      { contentType: 'application/x-msgpack', contentEncoding: 'binary', compression: undefined },
      accept,
    ),
  ).toEqual([]);
});

test('a message without a content type is refused (kombu reads it as application/data)', () => {
  const e = refusal(() =>
    decodeTaskMessage(
      { body: Buffer.from('[[], {}, {}]'), properties: { headers: { task: 't', id: 'i' } } },
      { accept },
    ),
  );
  expect(e).toMatchObject({
    code: 'PROTOCOL_CONTENT_DISALLOWED',
    message: 'properties.content_type: the message has no content type',
  });
});

test(`nesting deeper than ${MAX_NESTING} levels is refused at decode; ${MAX_NESTING} levels are accepted`, () => {
  const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  expect(decodeContent(Buffer.from(`[[${nested(MAX_NESTING - 2)}], {}, {}]`), json('utf-8'), accept)).toBeDefined();
  const e = refusal(() => decodeContent(Buffer.from(`[[${nested(10_000)}], {}, {}]`), json('utf-8'), accept));
  expect(e).toMatchObject({
    code: 'PROTOCOL_DECODE',
    message: `body: lists and mappings are nested deeper than ${MAX_NESTING} levels`,
  });
  const deepMap = `${'{"a": '.repeat(MAX_NESTING)}1${'}'.repeat(MAX_NESTING)}`;
  expect(refusal(() => decodeContent(Buffer.from(`[[${deepMap}], {}, {}]`), json('utf-8'), accept)).code).toBe(
    'PROTOCOL_DECODE',
  );
});
