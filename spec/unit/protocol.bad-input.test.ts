import { decodeTaskMessage } from '../../lib/protocol/index.js';
import { rawMessage, refusal } from '../support/raw-message.js';

const accept = ['json' as const];
const v2 = { task: 't', id: 'i' };

describe('bad messages are refused with an error that says what and where', () => {
  test('pickle is always refused, naming the content type', () => {
    const e = refusal(() =>
      decodeTaskMessage(rawMessage('x', { contentType: 'application/x-python-serialize', headers: v2 }), {
        accept: ['json', 'msgpack', 'yaml'],
      }),
    );
    expect(e.code).toBe('PROTOCOL_CONTENT_DISALLOWED');
    expect(e.message).toContain('application/x-python-serialize');
  });

  test('a content type outside the accept list is disallowed', () => {
    const e = refusal(() =>
      decodeTaskMessage(rawMessage('x', { contentType: 'application/x-yaml', headers: v2 }), { accept }),
    );
    expect(e.code).toBe('PROTOCOL_CONTENT_DISALLOWED');
  });

  test('an undecodable JSON body is a decode error', () => {
    const e = refusal(() => decodeTaskMessage(rawMessage('[[1, 2', { headers: v2 }), { accept }));
    expect(e.code).toBe('PROTOCOL_DECODE');
  });

  test('an unknown kombu __type__ marker is a decode error, as in kombu', () => {
    const e = refusal(() =>
      decodeTaskMessage(rawMessage('[[{"__type__": "frob", "__value__": 1}], {}, {}]', { headers: v2 }), { accept }),
    );
    expect(e.code).toBe('PROTOCOL_DECODE');
    expect(e.message).toContain('frob');
  });

  test('a v1 body without a task key is an unknown message', () => {
    const e = refusal(() => decodeTaskMessage(rawMessage('{"id": "x"}'), { accept }));
    expect(e.code).toBe('PROTOCOL_UNKNOWN_MESSAGE');
  });

  test('kwargs that are not a mapping are invalid, naming where', () => {
    const e = refusal(() => decodeTaskMessage(rawMessage('[[], [1], {}]', { headers: v2 }), { accept }));
    expect(e.code).toBe('PROTOCOL_INVALID');
    expect(e.message).toContain('body[1] (kwargs)');
  });

  test('a bad eta string is invalid', () => {
    const e = refusal(() =>
      decodeTaskMessage(rawMessage('[[], {}, {}]', { headers: { ...v2, eta: 'tomorrow' } }), { accept }),
    );
    expect(e.code).toBe('PROTOCOL_INVALID');
    expect(e.message).toContain('headers.eta');
  });

  test('a missing id header is invalid', () => {
    const e = refusal(() => decodeTaskMessage(rawMessage('[[], {}, {}]', { headers: { task: 't' } }), { accept }));
    expect(e.code).toBe('PROTOCOL_INVALID');
    expect(e.message).toContain('headers.id');
  });

  test('a naive eta is read as UTC', () => {
    const m = decodeTaskMessage(rawMessage('[[], {}, {}]', { headers: { ...v2, eta: '2026-01-01T00:00:00' } }), {
      accept,
    });
    expect(m.eta?.epochMs).toBe(Date.parse('2026-01-01T00:00:00Z'));
  });
});
