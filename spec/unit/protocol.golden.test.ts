import { decodeTaskMessage, encodeTaskMessage, parseKombuJson, stringifyKombuJson } from '../../lib/protocol/index.js';
import type { PyDecimal, PyUUID } from '../../lib/protocol/values.js';
import { PyDate, PyDateTime } from '../../lib/protocol/values.js';
import { fixtureNames, loadFixture, rawFromFixture } from '../support/fixtures.js';

const accept = ['json', 'msgpack', 'yaml'] as const;
// Body-only fixtures were recorded without headers; they get the minimal v2 headers a producer would send.
const decode = (name: string) => {
  const f = loadFixture(name);
  const headers =
    f.headers === null || (f.headers !== undefined && !('task' in f.headers) && !name.startsWith('smarter-v1'))
      ? { task: 'proj.tasks.add', id: 'body-only', ...(f.headers ?? {}) }
      : f.headers;
  return decodeTaskMessage(rawFromFixture({ ...f, headers }), { accept: [...accept] });
};

describe('every golden task message from Celery 5.6 decodes to what its fixture says', () => {
  const taskFixtures = fixtureNames().filter(
    (n) => (n.startsWith('task-v2-') || n.startsWith('smarter-')) && loadFixture(n).body_complete !== false,
  );

  test.each(taskFixtures.filter((n) => loadFixture(n).headers?.task || n.startsWith('smarter-v1')))('%s', (name) => {
    const f = loadFixture(name);
    const msg = decode(name);
    const expectedId = (f.headers?.id as string | undefined) ?? (f.task_id as string);
    expect(msg.id).toBe(expectedId);
    expect(msg.correlationId).toBe(f.properties?.correlation_id ?? expectedId);
    if (f.headers?.task) expect(msg.task).toBe(f.headers.task);
    expect(Array.isArray(msg.args)).toBe(true);
    expect(typeof msg.kwargs).toBe('object');
  });

  test('task-v2-default: args (2, 2), root id, reply_to, no eta', () => {
    const m = decode('task-v2-default.json');
    expect(m).toMatchObject({
      protocol: 2,
      task: 'proj.tasks.add',
      args: [2, 2],
      kwargs: {},
      retries: 0,
      eta: null,
      rootId: '11111111-1111-1111-1111-111111111111',
      replyTo: 'ae33ec49-d4e5-3401-87cd-8e80868acd51',
      ignoreResult: false,
      callbacks: null,
      timelimit: [null, null],
    });
  });

  test('task-v2-options: timelimit is [hard, soft], links and custom headers survive', () => {
    const m = decode('task-v2-options.json');
    expect(m.timelimit).toEqual([30, 20]);
    expect(m.priority).toBe(5);
    expect(m.eta?.iso).toBe('2026-11-30T00:25:32.379698+00:00');
    expect(m.eta?.micros).toBe(379698);
    expect(m.expires?.epochMs).toBe(Date.parse('2026-11-30T00:26:22.379Z'));
    expect(m.callbacks?.[0]).toMatchObject({ task: 'proj.tasks.add', args: [10] });
    expect(m.errbacks?.[0]?.task).toBe('proj.tasks.on_err');
    expect(m.customHeaders).toEqual({ 'x-custom': 'v' });
  });

  test('task-v2-json-type-markers: kombu markers become faithful values', () => {
    const m = decode('task-v2-json-type-markers.json');
    const arg = m.args[0] as Record<string, unknown>;
    expect(arg.dt).toBeInstanceOf(PyDateTime);
    expect((arg.dt as PyDateTime).iso).toBe('2024-01-02T03:04:05.678901+00:00');
    expect(arg.d).toEqual(new PyDate('2024-01-02'));
    expect((arg.dec as PyDecimal).value).toBe('1.10');
    expect((arg.u as PyUUID).toString()).toBe('12345678-1234-5678-1234-567812345678');
    expect(Buffer.from(arg.b as Buffer).toString()).toBe('hi');
    expect([...(arg.bin as Buffer)]).toEqual([0xff, 0x00]);
  });

  test('task-v2-json-type-markers: encoding the decoded values gives back the same bytes', () => {
    const text = loadFixture('task-v2-json-type-markers.json').body_text as string;
    expect(stringifyKombuJson(parseKombuJson(text))).toBe(text);
  });

  test('task-v2-zlib-compressed: the application/x-gzip label carries a zlib stream', () => {
    expect(decode('task-v2-zlib-compressed.json').args).toEqual([1, 2]);
  });

  test('task-v2-msgpack-body: msgpack bodies decode when accepted', () => {
    expect(decode('task-v2-msgpack-body.json').args).toEqual([1, 2]);
  });

  test('smarter-v1-create-charge-decimal: a v1 body with a Decimal kwarg', () => {
    const m = decode('smarter-v1-create-charge-decimal.json');
    expect(m.protocol).toBe(1);
    expect(m.task).toBe('smarter.apps.account.tasks.create_charge');
    expect((m.kwargs.total_cost as PyDecimal).value).toBe('0.00012345');
    expect(m.kwargsrepr).toContain("'total_cost': Decimal('0.00012345')");
  });

  test('smarter-v1-verify-custom-domain-countdown: the eta sits in the v1 body', () => {
    const m = decode('smarter-v1-verify-custom-domain-countdown.json');
    expect(m.eta?.iso).toBe('2026-11-30T01:22:08.687963+00:00');
    expect(m.kwargs.attempt).toBe(3);
  });

  test('smarter-v1-create-prompt-history: non-ASCII text and positional args', () => {
    const m = decode('smarter-v1-create-prompt-history.json');
    expect(m.args[0]).toBe(42);
    expect(JSON.stringify(m.args[3])).toContain('héllo');
  });

  test('smarter-v2-verify-domain-countdown-timelimit: [hard, soft] from the header', () => {
    expect(decode('smarter-v2-verify-domain-countdown-timelimit.json').timelimit).toEqual([1800, 1700]);
  });
});

describe('encoding', () => {
  test('re-encoding the golden default message gives the same headers and body', () => {
    const f = loadFixture('task-v2-default.json');
    const m = decode('task-v2-default.json');
    const enc = encodeTaskMessage(m);
    expect(enc.body.toString()).toBe(f.body_text);
    expect(enc.properties.headers).toEqual(f.headers);
    expect(Object.keys(enc.properties.headers)).toEqual(Object.keys(f.headers ?? {}));
    expect(enc.properties).toMatchObject({ deliveryMode: 2, priority: 0, correlationId: m.id, replyTo: m.replyTo });
  });

  test('the golden retry message is reproduced from its fields', () => {
    const f = loadFixture('task-v2-retry.json');
    const h = f.headers as Record<string, unknown>;
    const enc = encodeTaskMessage({
      id: h.id as string,
      task: h.task as string,
      args: [1],
      kwargs: {},
      retries: 1,
      eta: new PyDateTime(h.eta as string),
      rootId: h.root_id as string,
      parentId: h.parent_id as string,
      origin: 'gen1@host',
      replyTo: 'client-oid-queue',
      customHeaders: { 'x-custom': 'v' },
    });
    expect(enc.body.toString()).toBe(f.body_text);
    expect(enc.properties.headers).toEqual(h);
  });

  test('expires becomes the AMQP expiration in milliseconds', () => {
    const now = Date.parse('2026-11-30T00:00:00Z');
    const enc = encodeTaskMessage(
      { id: 'x', task: 't', args: [], kwargs: {}, expires: PyDateTime.fromEpochMs(now + 60_000) },
      now,
    );
    expect(enc.properties.expiration).toBe('60000');
    expect(enc.properties.headers.expires).toBe('2026-11-30T00:01:00+00:00');
  });
});
