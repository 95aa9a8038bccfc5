import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nullLogger } from '../../lib/logger.js';
import { RevokedSet } from '../../lib/worker/revoked.js';

test('the revoked set is bounded: past its size the oldest ids are forgotten first; a revoked id again is the newest', () => {
  let t = 0;
  const s = new RevokedSet(null, nullLogger(), 3, () => ++t);
  for (const id of ['a', 'b', 'c']) s.add(id);
  s.add('a');
  s.add('d');
  expect(s.ids()).toEqual(['c', 'a', 'd']);
  expect(s.has('b')).toBe(false);
  expect(s.size).toBe(3);
});

test('with a state file the revoked ids survive a restart; without one nothing is written', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'revoked-'));
  const file = path.join(dir, 'state', 'worker.db');
  try {
    const first = new RevokedSet(file, nullLogger());
    first.add('x1');
    first.add('x2');
    first.persist();
    const second = new RevokedSet(file, nullLogger());
    expect(second.has('x1')).toBe(false);
    second.load();
    expect(second.ids()).toEqual(['x1', 'x2']);
    const none = new RevokedSet(null, nullLogger());
    none.add('y');
    none.persist();
    expect(fs.readdirSync(path.join(dir, 'state'))).toEqual(['worker.db']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a state file that cannot be written stops the worker at start with a sentence naming the setting (under /proc Node 20 used to spin forever instead)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'revoked-'));
  const aFile = path.join(dir, 'file');
  fs.writeFileSync(aFile, '');
  for (const file of ['/proc/smarter-worker-nope/state', path.join(aFile, 'below', 'state')]) {
    expect(() => new RevokedSet(file, nullLogger()).load()).toThrow(
      /CELERY_WORKER_STATE_DB \/ --statedb: cannot write/,
    );
  }
  // Missing directories that can be made are made, as before.
  const nested = path.join(dir, 'a', 'b', 'state');
  new RevokedSet(nested, nullLogger()).load();
  expect(fs.existsSync(nested)).toBe(true);
  fs.rmSync(dir, { recursive: true, force: true });
});

test("ids learnt from other workers (mingle) before the state file is read join the file's ids rather than replace them; stale and older times are not taken", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'revoked-'));
  const file = path.join(dir, 'worker.db');
  try {
    const first = new RevokedSet(file, nullLogger());
    first.load();
    first.add('from-file');
    first.persist();
    const now = Date.now();
    const second = new RevokedSet(file, nullLogger());
    expect(
      second.merge([
        ['learnt', now - 1000],
        ['stale', now - 4 * 3600_000],
      ]),
    ).toBe(1);
    second.persist();
    second.load();
    expect(second.ids().sort()).toEqual(['from-file', 'learnt']);
    expect(second.merge([['learnt', now - 5000]])).toBe(0);
    expect(new Map(second.entries()).get('learnt')).toBe(now - 1000);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
