import { jest } from '@jest/globals';
import { createLogger, nullLogger } from '../../lib/logger.js';

// The expected lines are what winston 3.19 wrote for the same calls (the format this logger replaced).
const NOW = '2026-01-01T00:00:00.000Z';

function capture(fn: () => void): string[] {
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    fn();
  } finally {
    spy.mockRestore();
  }
  return lines
    .join('')
    .split('\n')
    .filter((l) => l !== '');
}

beforeAll(() => {
  jest.useFakeTimers({ now: new Date(NOW), doNotFake: ['nextTick', 'setImmediate', 'setTimeout', 'clearTimeout'] });
});
afterAll(() => {
  jest.useRealTimers();
});

describe('JSON lines (stdout not a TTY)', () => {
  test("winston's keys, sorted; meta message appended, stack and cause copied; bigints as strings; circular marked", () => {
    const lines = capture(() => {
      const l = createLogger({ level: 'warn', json: true });
      l.info('below the level');
      l.warn('with meta', { b: 1, a: 'x', nested: { z: 1, y: [1, 2, { d: 1, c: 2 }] } });
      l.error('meta message', { message: 'extra', stack: 'STACK', cause: 'why', x: undefined });
      l.warn('bigint', { big: 10n });
      l.warn('ts kept', { timestamp: 'T0' });
      l.warn('level in meta', { level: 'xx', message: '' });
      const circ: Record<string, unknown> = { a: 1 };
      circ.self = circ;
      l.warn('circular', { circ });
      l.warn('date', { when: new Date(0), list: [undefined, NaN, Infinity] });
    });
    expect(lines).toEqual([
      `{"a":"x","b":1,"level":"warn","message":"with meta","nested":{"y":[1,2,{"c":2,"d":1}],"z":1},"timestamp":"${NOW}"}`,
      `{"cause":"why","level":"error","message":"meta message extra","stack":"STACK","timestamp":"${NOW}"}`,
      `{"big":"10","level":"warn","message":"bigint","timestamp":"${NOW}"}`,
      '{"level":"warn","message":"ts kept","timestamp":"T0"}',
      `{"level":"warn","message":"level in meta","timestamp":"${NOW}"}`,
      `{"circ":{"a":1,"self":"[Circular]"},"level":"warn","message":"circular","timestamp":"${NOW}"}`,
      `{"level":"warn","list":[null,null,null],"message":"date","timestamp":"${NOW}","when":"1970-01-01T00:00:00.000Z"}`,
    ]);
  });

  test("an Error as meta gives its message and stack; a child's bindings yield to the line's own keys", () => {
    const err = new Error('boom');
    err.stack = 'Error: boom\n    at here';
    const lines = capture(() => {
      const l = createLogger({ level: 'debug', json: true });
      l.error('error meta', err as unknown as Record<string, unknown>);
      const c = l.child({ task: 't[1]', queue: 'q', a: 'binding' });
      c.warn('child', { a: 'own', k: 2 });
      c.child({ retries: 1, queue: 'q2' }).error('grandchild', { z: 0 });
      l.debug('dbg', { n: null });
    });
    expect(lines).toEqual([
      `{"level":"error","message":"error meta boom","stack":"Error: boom\\n    at here","timestamp":"${NOW}"}`,
      `{"a":"own","k":2,"level":"warn","message":"child","queue":"q","task":"t[1]","timestamp":"${NOW}"}`,
      `{"a":"binding","level":"error","message":"grandchild","queue":"q2","retries":1,"task":"t[1]","timestamp":"${NOW}","z":0}`,
      `{"level":"debug","message":"dbg","n":null,"timestamp":"${NOW}"}`,
    ]);
  });
});

describe('readable lines (a terminal)', () => {
  test('[timestamp: LEVEL] message, then the meta in the order given', () => {
    const lines = capture(() => {
      const l = createLogger({ level: 'info', json: false });
      l.info('plain');
      l.debug('below the level');
      l.warn('with meta', { b: 1, a: 'x' });
      l.child({ task: 't[1]', queue: 'q' }).child({ queue: 'q2' }).error('grandchild', { z: 0 });
    });
    expect(lines).toEqual([
      `[${NOW}: INFO] plain`,
      `[${NOW}: WARN] with meta {"b":1,"a":"x"}`,
      `[${NOW}: ERROR] grandchild {"task":"t[1]","queue":"q2","z":0}`,
    ]);
  });
});

test('levels: npm severities; a silent logger writes nothing but still answers isLevelEnabled', () => {
  const warn = createLogger({ level: 'warn', silent: true });
  expect([
    warn.isLevelEnabled('error'),
    warn.isLevelEnabled('warn'),
    warn.isLevelEnabled('info'),
    warn.isLevelEnabled('debug'),
  ]).toEqual([true, true, false, false]);
  expect(warn.child({ a: 1 }).isLevelEnabled('info')).toBe(false);
  expect(capture(() => nullLogger().error('dropped'))).toEqual([]);
});
