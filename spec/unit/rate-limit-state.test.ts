import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TokenBucket, parseRate } from '../../lib/worker/rate-limit.js';
import { REVOKE_EXPIRES_MS, loadRevoked, saveRevoked } from '../../lib/worker/state-db.js';

describe("Celery's rate strings and token bucket", () => {
  test.each([
    ['10', 10],
    ['10/s', 10],
    ['30/m', 0.5],
    ['3600/h', 1],
  ])('%s is %d per second', (text, perSecond) => expect(parseRate(text)).toBe(perSecond));

  test("a bad rate string is refused with Celery's message", () => {
    expect(() => parseRate('ten per minute')).toThrow('Invalid rate limit string');
  });

  test('capacity 1: the first take is free, the next waits 1/rate', () => {
    const b = new TokenBucket(2, 0);
    expect(b.take(0)).toBe(0);
    expect(b.take(0)).toBe(500);
    expect(b.take(500)).toBe(0);
  });
});

describe('the revoked-ids state file', () => {
  test('survives a save and a load; entries older than 3 h are dropped', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'statedb-')), 'worker.state');
    const now = Date.now();
    saveRevoked(
      file,
      new Map([
        ['fresh', now - 1000],
        ['stale', now - REVOKE_EXPIRES_MS - 1],
      ]),
    );
    expect([...loadRevoked(file, now).keys()]).toEqual(['fresh']);
    fs.rmSync(path.dirname(file), { recursive: true });
  });

  test('a missing or corrupt file gives an empty set, not a crash', () => {
    expect(loadRevoked('/nonexistent/worker.state').size).toBe(0);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'statedb-')), 'bad');
    fs.writeFileSync(file, '{oops');
    expect(loadRevoked(file).size).toBe(0);
  });
});
