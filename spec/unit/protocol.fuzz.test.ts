/**
 * The decoder under fast-check, no network: fuzzed messages are refused naming the field at fault and good
 * ones decode; arbitrary bytes, headers and labels never make it throw anything but a ProtocolError.
 */
import fc from 'fast-check';
import { decodeTaskMessage } from '../../lib/protocol/index.js';
import type { RawMessage } from '../../lib/protocol/types.js';
import { FUZZ_MAX_BODY, sampleCases } from '../support/fuzz-messages.js';

const PROTOCOL_CODES = [
  'PROTOCOL_DECODE',
  'PROTOCOL_CONTENT_DISALLOWED',
  'PROTOCOL_INVALID',
  'PROTOCOL_UNKNOWN_MESSAGE',
];

function rawOf(p: {
  body: Buffer;
  options: { contentType?: string; contentEncoding?: string; correlationId: string; headers?: Record<string, unknown> };
}): RawMessage {
  const { contentType, contentEncoding, correlationId, headers } = p.options;
  return {
    body: p.body,
    properties: {
      ...(contentType !== undefined ? { contentType } : {}),
      ...(contentEncoding !== undefined ? { contentEncoding } : {}),
      correlationId,
      ...(headers ? { headers } : {}),
    },
  };
}

test('20,000 fuzzed messages: each good one decodes, each bad one is refused with a ProtocolError naming the field at fault', () => {
  const cases = sampleCases(20_000, 16);
  const kinds = new Map<string, number>();
  for (const [i, c] of cases.entries()) {
    const id = `id-${i}`;
    kinds.set(c.kind.split(' ')[0] ?? c.kind, (kinds.get(c.kind.split(' ')[0] ?? c.kind) ?? 0) + 1);
    let outcome: { ok: true; task: string } | { ok: false; code: string; message: string };
    try {
      const m = decodeTaskMessage(rawOf(c.build(id, 'fuzzkey')), { accept: ['json'], maxBodyBytes: FUZZ_MAX_BODY });
      outcome = { ok: true, task: m.task };
    } catch (err) {
      const e = err as { code: string; message: string };
      outcome = { ok: false, code: e.code, message: e.message };
    }
    const shown = { kind: c.kind, expect: c.expect, outcome };
    if (c.expect === 'ok') expect(shown).toMatchObject({ outcome: { ok: true, task: 'test.stamp' } });
    // The registry, not the decoder, refuses an unknown name.
    else if (c.expect === 'is not registered') expect(shown).toMatchObject({ outcome: { ok: true } });
    else {
      expect(shown).toMatchObject({ outcome: { ok: false } });
      if (!outcome.ok) {
        expect(PROTOCOL_CODES).toContain(outcome.code);
        if (!outcome.message.includes(c.expect)) {
          throw new Error(`${c.kind}: expected the reason to name ${c.expect}, got ${outcome.message}`);
        }
      }
    }
  }
  // Every family of the generator was drawn.
  expect(kinds.size).toBeGreaterThanOrEqual(10);
});

const anyHeaders = fc.dictionary(
  fc.oneof(
    fc.constantFrom(
      'task',
      'id',
      'retries',
      'eta',
      'expires',
      'timelimit',
      'compression',
      'stamps',
      'stamped_headers',
      'ignore_result',
      'group_index',
      'argsrepr',
    ),
    fc.string({ maxLength: 6 }),
  ),
  fc.anything({ maxDepth: 3 }),
  { maxKeys: 6 },
);
const anyBody = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
  fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
  fc
    .tuple(fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }))
    .map((t) => Buffer.from(JSON.stringify(t))),
);

test('30,000 arbitrary messages (any bytes, any header values, any labels) never throw anything but a ProtocolError', () => {
  fc.assert(
    fc.property(
      anyBody,
      fc.option(anyHeaders, { nil: undefined }),
      fc.option(
        fc.constantFrom(
          'application/json',
          'application/x-msgpack',
          'application/x-yaml',
          'application/x-python-serialize',
          'text/plain',
        ),
        { nil: undefined },
      ),
      fc.option(fc.constantFrom('utf-8', 'binary', 'utf-16', 'latin-1', 'ebcdic'), { nil: undefined }),
      (body, headers, contentType, contentEncoding) => {
        const raw: RawMessage = {
          body,
          properties: {
            ...(contentType ? { contentType } : {}),
            ...(contentEncoding ? { contentEncoding } : {}),
            ...(headers ? { headers } : {}),
          },
        };
        try {
          decodeTaskMessage(raw, { accept: ['json', 'msgpack', 'yaml'], maxBodyBytes: FUZZ_MAX_BODY });
        } catch (err) {
          const e = err as { code?: unknown; name?: unknown; message?: unknown };
          if (!PROTOCOL_CODES.includes(String(e.code)) || e.name !== 'ProtocolError') throw err;
        }
      },
    ),
    { numRuns: 30_000, seed: 16 },
  );
});
