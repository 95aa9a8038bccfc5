/**
 * kombu's Redis envelope, golden-tested against what Debian's Python Celery 5.2.6 (kombu 5.2.4) LPUSHed into
 * Redis with a `redis://` broker: protocol 1 with a countdown, protocol 2, and priority 5 (captured with
 * `global_keyprefix` "cap:golden:", in spec/fixtures/redis/).
 */
import fs from 'node:fs';
import { decodeEnvelope, encodeEnvelope } from '../../lib/broker/redis/envelope.js';
import { KombuKeys, SEP, messagePriority, priorityStep } from '../../lib/broker/redis/keys.js';
import { decodeTaskMessage, encodeTaskMessage } from '../../lib/protocol/index.js';

const captured = JSON.parse(fs.readFileSync('spec/fixtures/redis/celery-5.2.6-capq.json', 'utf8')) as Record<
  string,
  unknown[]
>;
const keys = new KombuKeys({ prefix: 'cap:golden:' });
const envelopes = (list: string) => (captured[list] ?? []).map((e) => JSON.stringify(e));
const accept = { accept: ['json' as const] };

describe('Python Celery 5.2.6 envelopes in Redis decode to the task it sent', () => {
  const plain = envelopes(keys.queue('capq'));
  const pri = envelopes(keys.queue('capq', 5));

  test('the capture has the queue list, its priority-3 sub-list and the binding kombu declared', () => {
    expect(plain).toHaveLength(2);
    expect(pri).toHaveLength(2);
    expect(captured[keys.binding('capq')]).toEqual([KombuKeys.bindingMember('capq', 'capq')]);
  });

  test('protocol 2: headers carry the task, the base64 body the args, delivery_info the anonymous exchange', () => {
    const env = decodeEnvelope(plain.find((t) => t.includes('"id-2"')) ?? '');
    expect(env).toMatchObject({ exchange: '', routingKey: 'capq', redelivered: false });
    expect(env.deliveryTag).toMatch(/^[0-9a-f-]{36}$/);
    const msg = decodeTaskMessage(env.raw, accept);
    expect(msg).toMatchObject({
      protocol: 2,
      id: 'id-2',
      task: 'tasks.add',
      args: [2, 3],
      kwargs: { x: 'é' },
      priority: 0,
    });
  });

  test('protocol 1 (as Smarter sends): empty headers, the countdown became an eta in the body', () => {
    const env = decodeEnvelope(plain.find((t) => t.includes('"id-1"')) ?? '');
    const msg = decodeTaskMessage(env.raw, accept);
    expect(msg).toMatchObject({ protocol: 1, id: 'id-1', task: 'tasks.add', args: [2, 3], kwargs: { x: 'é' } });
    expect(msg.eta?.iso).toMatch(/^2026-/);
  });

  test('priority 5 went to <queue>\\x06\\x163, as our key for priority 5', () => {
    expect(keys.queue('capq', 5)).toBe(`cap:golden:capq${SEP}3`);
    const msg = decodeTaskMessage(decodeEnvelope(pri[0] ?? '').raw, accept);
    expect(msg.priority).toBe(5);
  });

  test("our envelope of the same task has kombu's keys in kombu's order and decodes to the same task", () => {
    const py = JSON.parse(plain.find((t) => t.includes('"id-2"')) ?? '{}') as Record<string, Record<string, unknown>>;
    const enc = encodeTaskMessage({ id: 'id-2', task: 'tasks.add', args: [2, 3], kwargs: { x: 'é' } });
    const { text, object } = encodeEnvelope(enc.body, enc.properties, '', 'capq');
    expect(Object.keys(object)).toEqual(Object.keys(py));
    const ours = object.properties as Record<string, unknown>;
    expect(Object.keys(ours)).toEqual(Object.keys(py.properties ?? {}).filter((k) => k !== 'reply_to'));
    expect(Object.keys(object.headers as object)).toEqual(expect.arrayContaining(Object.keys(py.headers ?? {})));
    expect(text).toContain('"body_encoding": "base64"');
    const back = decodeTaskMessage(decodeEnvelope(text).raw, accept);
    expect(back).toMatchObject({ id: 'id-2', task: 'tasks.add', args: [2, 3], kwargs: { x: 'é' } });
  });
});

describe('kombu priority steps and key names', () => {
  test.each([
    [0, 0],
    [1, 0],
    [2, 0],
    [3, 3],
    [5, 3],
    [6, 6],
    [8, 6],
    [9, 9],
    [200, 9],
    [-4, 0],
  ])('priority %s is served from step %s', (p, s) => expect(priorityStep(messagePriority(p))).toBe(s));

  test('an absent or non-numeric priority is 0, as kombu reads it', () => {
    expect(messagePriority(undefined)).toBe(0);
    expect(messagePriority('x')).toBe(0);
  });

  test("fanout channels carry kombu's /{db}. prefix and glob patterns", () => {
    const k = new KombuKeys({ db: 1 });
    expect(k.fanoutTopic('celery.pidbox')).toBe('/1.celery.pidbox');
    expect(k.fanoutTopic('celeryev', 'task.succeeded')).toBe('/1.celeryev/task.succeeded');
    expect(k.fanoutPattern('celeryev', '#')).toBe('/1.celeryev/*');
  });
});

describe("envelopes that are not kombu's are refused with where they fail", () => {
  test.each([
    ['not json', 'PROTOCOL_DECODE', 'redis envelope'],
    ['[1]', 'PROTOCOL_INVALID', 'redis envelope'],
    ['{"body": 3}', 'PROTOCOL_INVALID', 'redis envelope.body'],
    ['{"body": "@@", "properties": {"body_encoding": "base64"}}', 'PROTOCOL_DECODE', 'redis envelope.body'],
    [
      '{"body": "", "properties": {"body_encoding": "rot13"}}',
      'PROTOCOL_DECODE',
      'redis envelope.properties.body_encoding',
    ],
    ['{"body": "", "properties": {"delivery_info": 1}}', 'PROTOCOL_INVALID', 'redis envelope.properties.delivery_info'],
  ])('%s', (text, code, where) => {
    expect(() => decodeEnvelope(text)).toThrow(expect.objectContaining({ code, where }) as Error);
  });
});
