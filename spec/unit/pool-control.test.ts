/**
 * The pool's levers for one async process: the autoscaler (celery/worker/autoscale.py) grows the slots with the
 * backlog and shrinks them after its keepalive; the recycler asks for a fresh process past
 * `--max-tasks-per-child` (at the Nth start, so nothing starts after it) or `--max-memory-per-child` (after a
 * task); Celery's pool commands answer as Celery's do.
 */
import { Autoscaler } from '../../lib/control/autoscale.js';
import { humanbytes, memdump, sampleMemory } from '../../lib/control/memory.js';
import { Recycler } from '../../lib/control/recycle.js';
import { compileArguments, prettyReply } from '../../lib/control/client.js';
import { nullLogger } from '../../lib/logger.js';

class FakePool {
  concurrency: number;
  active = 0;
  reserved = 0;
  constructor(slots: number) {
    this.concurrency = slots;
  }
  counters() {
    return { active: this.active, reserved: this.reserved };
  }
  resize(n: number) {
    this.concurrency = n;
  }
}

test('autoscale grows to the backlog (at most MAX) and shrinks to MIN only after the keepalive', () => {
  const pool = new FakePool(2);
  let now = 0;
  const a = new Autoscaler(pool, { max: 10, min: 2 }, nullLogger(), 30_000, () => now);
  pool.reserved = 6;
  pool.active = 2;
  a.step();
  expect(pool.concurrency).toBe(8);
  pool.reserved = 40;
  a.step();
  expect(pool.concurrency).toBe(10);
  pool.reserved = 0;
  pool.active = 1;
  now = 10_000;
  a.step();
  expect(pool.concurrency).toBe(10);
  now = 31_000;
  a.step();
  expect(pool.concurrency).toBe(2);
});

test('autoscale MAX MIN moves the bounds and the slots into them', () => {
  const pool = new FakePool(8);
  const a = new Autoscaler(pool, { max: 10, min: 2 }, nullLogger());
  expect(a.update(4, null)).toEqual({ max: 4, min: 2 });
  expect(pool.concurrency).toBe(4);
  expect(a.update(20, 12)).toEqual({ max: 20, min: 12 });
  expect(pool.concurrency).toBe(12);
});

test('max-tasks-per-child asks once, at the Nth start', () => {
  const reasons: string[] = [];
  const r = new Recycler({ maxTasks: 3, maxMemoryKiB: null }, (why) => reasons.push(why), nullLogger());
  r.taskStarted();
  r.taskStarted();
  expect(reasons).toEqual([]);
  r.taskStarted();
  r.taskStarted();
  expect(reasons).toEqual(['ran 3 tasks (--max-tasks-per-child 3)']);
});

test('max-memory-per-child asks after a task that leaves more resident memory than the bound', () => {
  let rss = 100 * 1024 * 1024;
  const reasons: string[] = [];
  const r = new Recycler(
    { maxTasks: null, maxMemoryKiB: 150 * 1024 },
    (why) => reasons.push(why),
    nullLogger(),
    () => rss,
  );
  r.taskEnded();
  expect(reasons).toEqual([]);
  rss = 200 * 1024 * 1024;
  r.taskEnded();
  expect(reasons).toEqual(['resident memory 204800 KiB after a task (--max-memory-per-child 153600)']);
  expect(r.request('again')).toBe(false);
});

test("memsample and memdump answer in Celery's humanbytes", () => {
  expect(humanbytes(45.5 * 2 ** 20)).toBe('45.5MB');
  expect(humanbytes(3 * 2 ** 30)).toBe('3GB');
  expect(humanbytes(512)).toBe('512b');
  sampleMemory(10 * 2 ** 20);
  const dump = memdump();
  expect(dump).toMatch(/^- rss \(sample\):\n- {4}> 10MB,\n- rss \(end\): .+\.\n- heap \(end\): .+ used of .+\.\n$/);
});

test("the CLI's arguments are compiled as Celery's Panel.meta says", () => {
  expect(compileArguments('pool_grow', ['3'])).toEqual({ n: 3 });
  expect(compileArguments('autoscale', ['10', '2'])).toEqual({ max: 10, min: 2 });
  expect(compileArguments('revoke', ['a', 'b'])).toEqual({ task_id: ['a', 'b'] });
  expect(compileArguments('terminate', ['KILL', 'a'])).toEqual({ signal: 'KILL', task_id: ['a'] });
  expect(compileArguments('time_limit', ['t', '1.5', '3'])).toEqual({ task_name: 't', soft: 1.5, hard: 3 });
  expect(() => compileArguments('ping', ['x'])).toThrow(/takes arguments/);
  expect(() => compileArguments('pool_grow', ['x'])).toThrow(/integer/);
});

test("replies print as Celery's CLI prints them", () => {
  expect(prettyReply({ ok: 'pong' })).toEqual({ status: 'OK', body: '    pong' });
  expect(prettyReply({ error: "ValueError('Autoscale not enabled')" })).toEqual({
    status: 'ERROR',
    body: "    ValueError('Autoscale not enabled')",
  });
  expect(prettyReply(['a', 'b'])).toEqual({ status: 'OK', body: '* a\n* b' });
  expect(prettyReply([])).toEqual({ status: 'OK', body: '- empty -' });
});
