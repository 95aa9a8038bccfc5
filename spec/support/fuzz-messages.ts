/**
 * Fuzzed task messages (fast-check), each with what must become of it: `ok` (a `test.stamp` run that counts
 * itself under the given key), or the part of the message whose fault must be named in the refusal, as the
 * decoder's `where` (`headers.retries`, `body[1] (kwargs)`, `properties.content_type`, …). One fault per bad
 * message, so the expected reason is unambiguous. Used by the decoder's property test (no network) and by
 * the fault suite's fuzz run against RabbitMQ.
 */
import zlib from 'node:zlib';
import fc from 'fast-check';

export interface FuzzPublish {
  body: Buffer;
  options: {
    contentType?: string;
    contentEncoding?: string;
    correlationId: string;
    headers?: Record<string, unknown>;
  };
}

export interface FuzzCase {
  kind: string;
  /** `ok`, or a text the refusal reason must contain (the field at fault). */
  expect: string;
  build(id: string, key: string): FuzzPublish;
}

/** Body-size limit the fuzzed messages are made against: `huge` ones are over it, good ones well under. */
export const FUZZ_MAX_BODY = 128 * 1024;

const JSON_TYPE = 'application/json';

const v2headers = (id: string, extra: Record<string, unknown> = {}) => ({
  lang: 'py',
  task: 'test.stamp',
  id,
  root_id: id,
  retries: 0,
  ...extra,
});
const stampKwargs = (key: string) => ({ key, due_ms: 0 });
const json = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');
const good = (id: string, key: string, extra: Record<string, unknown> = {}): FuzzPublish => ({
  body: json([[], stampKwargs(key), { callbacks: null, errbacks: null, chain: null, chord: null }]),
  options: { contentType: JSON_TYPE, contentEncoding: 'utf-8', correlationId: id, headers: v2headers(id, extra) },
});

// Values of each wrong type, as AMQP headers and JSON can carry them. Buffers are left out: they are strings.
const notString = fc.oneof(
  fc.integer(),
  fc.double({ min: -1e6, max: 1e6, noNaN: true }),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.integer(), { minKeys: 1, maxKeys: 3 }),
);
const notInt = fc.oneof(
  fc.double({ min: -1e6, max: 1e6, noNaN: true }).filter((d) => !Number.isInteger(d)),
  fc.boolean(),
  fc.string({ maxLength: 8 }).filter((s) => !/^-?\d+$/.test(s)),
  fc.array(fc.integer(), { maxLength: 3 }),
);
const notBool = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.array(fc.boolean(), { maxLength: 2 }));
const notList = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.integer(), { minKeys: 1, maxKeys: 2 }),
);
const notMapping = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 3 }),
);
const notDate = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.string({ minLength: 1, maxLength: 8 }).map((s) => `not a date ${s}`),
  fc.array(fc.integer(), { maxLength: 2 }),
);
const notNumberText = fc
  .string({ minLength: 1, maxLength: 6 })
  .filter((s) => s.trim() === '' || !Number.isFinite(Number(s)));

const STRING_HEADERS = [
  'id',
  'task',
  'root_id',
  'parent_id',
  'group',
  'shadow',
  'origin',
  'argsrepr',
  'kwargsrepr',
  'compression',
] as const;
const INT_HEADERS = ['retries', 'group_index', 'replaced_task_nesting'] as const;

const headerFault: fc.Arbitrary<FuzzCase> = fc.oneof(
  fc.tuple(fc.constantFrom(...STRING_HEADERS), notString).map(([name, v]) => headerCase(name, v)),
  fc.tuple(fc.constantFrom(...INT_HEADERS), notInt).map(([name, v]) => headerCase(name, v)),
  fc.tuple(fc.constantFrom('eta', 'expires'), notDate).map(([name, v]) => headerCase(name, v)),
  notBool.map((v) => headerCase('ignore_result', v)),
  fc
    .oneof(fc.integer(), fc.string({ maxLength: 6 }), fc.tuple(notNumberText, fc.constant(null)))
    .map((v) => headerCase('timelimit', v)),
  fc
    .oneof(fc.integer(), fc.string({ maxLength: 6 }), fc.array(fc.integer(), { minLength: 1, maxLength: 3 }))
    .map((v) => headerCase('stamped_headers', v)),
  notMapping.map((v) => headerCase('stamps', v)),
  fc.string({ minLength: 1, maxLength: 8 }).map((s) => headerCase('compression', `x-none-${s}`)),
);

function headerCase(name: string, value: unknown): FuzzCase {
  return {
    kind: `header ${name}`,
    expect: `headers.${name}`,
    build: (id, key) => good(id, key, { [name]: value }),
  };
}

function withoutHeader(id: string, key: string, name: string): FuzzPublish {
  const m = good(id, key);
  const { [name]: _gone, ...headers } = m.options.headers ?? {};
  return { ...m, options: { ...m.options, headers } };
}

function bodyCase(kind: string, expect: string, body: (key: string) => unknown): FuzzCase {
  return {
    kind,
    expect,
    build: (id, key) => {
      const m = good(id, key);
      return { ...m, body: json(body(key)) };
    },
  };
}

const signatureFault = fc.oneof(
  notList.map((v) => ['callbacks', v, 'embed.callbacks'] as const),
  notList.map((v) => ['errbacks', v, 'embed.errbacks'] as const),
  notList.map((v) => ['chain', v, 'embed.chain'] as const),
  notMapping.map((v) => ['chord', v, 'embed.chord'] as const),
  notString.map((v) => ['callbacks', [{ task: v }], 'embed.callbacks[0].task'] as const),
  notList.map((v) => ['chain', [{ task: 'test.stamp', args: v }], 'embed.chain[0].args'] as const),
  notMapping.map((v) => ['chord', { task: 'test.stamp', options: v }, 'embed.chord.options'] as const),
);

const bodyFault: fc.Arbitrary<FuzzCase> = fc.oneof(
  fc
    .oneof(
      fc.integer(),
      fc.string({ maxLength: 8 }),
      fc.boolean(),
      fc.constant(null),
      fc.dictionary(fc.constantFrom('a', 'b', 'kw'), fc.integer(), { maxKeys: 2 }),
    )
    .map((v) => bodyCase('body shape', 'body', () => v)),
  notList.map((v) => bodyCase('args type', 'body[0] (args)', (key) => [v, stampKwargs(key), {}])),
  notMapping.map((v) => bodyCase('kwargs type', 'body[1] (kwargs)', () => [[], v, {}])),
  notMapping.map((v) => bodyCase('embed type', 'body[2] (embed)', (key) => [[], stampKwargs(key), v])),
  signatureFault.map(([field, v, where]) =>
    bodyCase(`embed ${field}`, where, (key) => [[], stampKwargs(key), { [field]: v }]),
  ),
  // v1/v2 hybrids: v2 headers, a v1-style body dict.
  notList.map((v) => bodyCase('hybrid args', 'body.args', (key) => ({ args: v, kwargs: stampKwargs(key) }))),
  notMapping.map((v) => bodyCase('hybrid kwargs', 'body.kwargs', () => ({ args: [], kwargs: v }))),
  fc
    .integer({ min: 300, max: 3000 })
    .map((depth) =>
      bodyCase(`nesting ${depth}`, 'body: lists and mappings are nested deeper', (key) => [
        [nest(depth)],
        stampKwargs(key),
        {},
      ]),
    ),
);

function nest(depth: number): unknown {
  let v: unknown = [];
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { k: v };
  return v;
}

const v1Field = fc.oneof(
  notString.map((v) => ['id', v] as const),
  notString.map((v) => ['task', v] as const),
  notList.map((v) => ['args', v] as const),
  notMapping.map((v) => ['kwargs', v] as const),
  notInt.map((v) => ['retries', v] as const),
  notDate.map((v) => ['eta', v] as const),
  notDate.map((v) => ['expires', v] as const),
);

function v1(id: string, key: string, extra: Record<string, unknown> = {}): FuzzPublish {
  return {
    body: json({
      task: 'test.stamp',
      id,
      args: [],
      kwargs: stampKwargs(key),
      retries: 0,
      eta: null,
      expires: null,
      utc: true,
      ...extra,
    }),
    options: { contentType: JSON_TYPE, contentEncoding: 'utf-8', correlationId: id, headers: {} },
  };
}

const v1Fault: fc.Arbitrary<FuzzCase> = v1Field.map(([field, v]) => ({
  kind: `v1 ${field}`,
  expect: `body.${field}`,
  build: (id: string, key: string) => v1(id, key, { [field]: v }),
}));

const NOT_ACCEPTED = [
  'application/x-python-serialize',
  'application/data',
  'text/plain',
  'application/xml',
  'application/x-yaml',
  'application/x-msgpack',
  'application/json; charset=utf-8',
  '',
];

const envelopeFault: fc.Arbitrary<FuzzCase> = fc.oneof(
  fc
    .oneof(
      fc.constantFrom(...NOT_ACCEPTED),
      fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim().toLowerCase() !== JSON_TYPE),
    )
    .map((contentType) => ({
      kind: 'content type',
      expect: 'properties.content_type',
      build: (id: string, key: string) => {
        const m = good(id, key);
        return { ...m, options: { ...m.options, contentType } };
      },
    })),
  fc.constant<FuzzCase>({
    kind: 'no content type',
    expect: 'properties.content_type',
    build: (id, key) => {
      const { contentType: _dropped, ...options } = good(id, key).options;
      return { body: good(id, key).body, options };
    },
  }),
  fc.string({ minLength: 1, maxLength: 8 }).map((s) => ({
    kind: 'content encoding',
    expect: 'properties.content_encoding',
    build: (id: string, key: string) => {
      const m = good(id, key);
      return { ...m, options: { ...m.options, contentEncoding: `x-enc-${s}` } };
    },
  })),
  fc.nat().map((cut) => ({
    kind: 'broken JSON',
    expect: 'body: cannot decode application/json body',
    build: (id: string, key: string) => {
      const m = good(id, key);
      return { ...m, body: m.body.subarray(0, cut % m.body.length) };
    },
  })),
  fc.tuple(fc.nat(), fc.constantFrom(0xff, 0xc0, 0xed, 0x80)).map(([at, byte]) => ({
    kind: 'bad UTF-8',
    expect: 'body: the body is not valid utf-8',
    build: (id: string, key: string) => {
      const m = good(id, key);
      const b = Buffer.from(m.body);
      // Inside the key string, so the rest stays JSON: only the bytes are wrong.
      const start = b.indexOf(Buffer.from(key));
      b[start + (at % key.length)] = byte;
      return { ...m, body: b };
    },
  })),
  fc.constant<FuzzCase>({
    kind: 'no task header, not v1',
    expect: 'message: neither a v2 `task` header nor a v1 body',
    build: (id, key) => withoutHeader(id, key, 'task'),
  }),
  fc.constant<FuzzCase>({
    kind: 'no id header',
    expect: 'headers.id',
    build: (id, key) => withoutHeader(id, key, 'id'),
  }),
  fc.string({ minLength: 1, maxLength: 10 }).map((s) => ({
    kind: 'unknown task',
    expect: 'is not registered',
    build: (id: string, key: string) => good(id, key, { task: `fuzz.nope.${s}` }),
  })),
  fc.constant<FuzzCase>({
    kind: 'corrupt zlib',
    expect: 'body: cannot decompress',
    build: (id, key) => good(id, key, { compression: 'application/x-gzip' }),
  }),
);

const sizeFault: fc.Arbitrary<FuzzCase> = fc.oneof(
  fc.integer({ min: 1, max: 64 * 1024 }).map((extra) => ({
    kind: 'huge body',
    expect: 'over the limit of',
    build: (id: string, key: string) => ({
      ...good(id, key),
      body: json([['x'.repeat(FUZZ_MAX_BODY + extra)], stampKwargs(key), {}]),
    }),
  })),
  fc.constant<FuzzCase>({
    kind: 'zlib bomb',
    expect: 'decompresses to more than the limit',
    build: (id, key) => ({
      ...good(id, key, { compression: 'application/x-gzip' }),
      body: zlib.deflateSync(json([['a'.repeat(16 * FUZZ_MAX_BODY)], stampKwargs(key), {}])),
    }),
  }),
);

// Custom headers of any AMQP-encodable shape ride along on good messages and must not matter.
const customHeaders = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 8 }).map((s) => `x-${s}`),
  fc.oneof(
    fc.integer(),
    fc.string({ maxLength: 10 }),
    fc.boolean(),
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.constant(null),
  ),
  { maxKeys: 3 },
);

const goodCase: fc.Arbitrary<FuzzCase> = fc.oneof(
  customHeaders.map((extra) => ({
    kind: 'good v2',
    expect: 'ok',
    build: (id: string, key: string) => good(id, key, extra),
  })),
  fc.constantFrom('utf-8', 'utf8', 'UTF-8', undefined).map((enc) => ({
    kind: 'good v2 encoding',
    expect: 'ok',
    build: (id: string, key: string) => {
      const m = good(id, key);
      const { contentEncoding: _e, ...options } = m.options;
      return { ...m, options: enc === undefined ? options : { ...options, contentEncoding: enc } };
    },
  })),
  fc.constant<FuzzCase>({
    kind: 'good v2 zlib',
    expect: 'ok',
    build: (id, key) => {
      const m = good(id, key, { compression: 'application/x-gzip' });
      return { ...m, body: zlib.deflateSync(m.body) };
    },
  }),
  fc.constant<FuzzCase>({ kind: 'good v1', expect: 'ok', build: (id, key) => v1(id, key) }),
  fc.constant<FuzzCase>({
    kind: 'good hybrid',
    expect: 'ok',
    build: (id, key) => ({ ...good(id, key), body: json({ args: [], kwargs: stampKwargs(key) }) }),
  }),
);

/** Half good, half bad; huge bodies rare (they weigh on the broker), the other faults about equally often. */
export const fuzzCase: fc.Arbitrary<FuzzCase> = fc.oneof(
  { arbitrary: goodCase, weight: 200 },
  { arbitrary: headerFault, weight: 60 },
  { arbitrary: bodyFault, weight: 50 },
  { arbitrary: v1Fault, weight: 25 },
  { arbitrary: envelopeFault, weight: 63 },
  { arbitrary: sizeFault, weight: 2 },
);

/** `n` cases, the same ones for the same seed. */
export function sampleCases(n: number, seed: number): FuzzCase[] {
  return fc.sample(fuzzCase, { numRuns: n, seed });
}
