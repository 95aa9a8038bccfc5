import { republishProperties } from '../../lib/broker/republish.js';
import { describeDeadLetter, isDeadLetterHeader } from '../../lib/deadletter/message.js';
import type { RawMessage } from '../../lib/protocol/types.js';

/** The properties a replay keeps: all but `expiration`. */
const KEPT = {
  contentType: 'application/json',
  contentEncoding: 'utf-8',
  correlationId: 'c1',
  replyTo: 'r1',
  priority: 3,
  deliveryMode: 2,
};

const raw = (headers: Record<string, unknown>, body = '[[1], {}, {}]'): RawMessage => ({
  body: Buffer.from(body),
  properties: { ...KEPT, expiration: '60000', headers },
});

test('a message the worker dead-lettered is described by its headers', () => {
  const d = describeDeadLetter(
    raw({
      task: 'a.b',
      'x-dead-letter-reason': 'OperationalError: down',
      'x-original-queue': 'q',
      'x-dead-lettered-at': '2026-12-01T09:00:00.000Z',
    }),
  );
  expect(d).toEqual({
    reason: 'OperationalError: down',
    task: 'a.b',
    originalQueue: 'q',
    at: Date.parse('2026-12-01T09:00:00.000Z'),
  });
});

test('a message RabbitMQ dead-lettered itself is described by its x-death, and a protocol 1 message by its body', () => {
  const d = describeDeadLetter(
    raw(
      { 'x-death': [{ reason: 'expired', queue: 'q2', time: 1_700_000_000, count: 1 }] },
      '{"id": "i", "task": "v1.task", "args": [], "kwargs": {}}',
    ),
  );
  expect(d).toEqual({ reason: 'rabbitmq: expired', task: 'v1.task', originalQueue: 'q2', at: 1_700_000_000_000 });
  expect(describeDeadLetter(raw({}, '{nope'))).toMatchObject({
    task: '(not a task message)',
    reason: '(no reason recorded)',
    originalQueue: null,
    at: null,
  });
});

test('a replayed message is the original without the dead-letter headers and the forwarding mark', () => {
  const headers = {
    task: 'a.b',
    id: 'i',
    retries: 3,
    'x-custom': 'kept',
    'x-dead-letter-reason': 'r',
    'x-original-queue': 'q',
    'x-original-exchange': '',
    'x-original-routing-key': 'q',
    'x-dead-lettered-by': 'n',
    'x-dead-lettered-at': 't',
    'x-death': [],
    'x-first-death-reason': 'expired',
    'x-smarter-forwarded-by': 'n',
    'x-smarter-forwarded-from': 'q',
  };
  const p = republishProperties(raw(headers), { drop: isDeadLetterHeader });
  expect(p).toEqual({ ...KEPT, headers: { task: 'a.b', id: 'i', retries: 3, 'x-custom': 'kept' } });
});
