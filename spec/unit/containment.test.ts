/**
 * The pieces of containment, each on its own (no process handlers, no broker): the run scope that what a task
 * starts carries, the run's `fail` that ends the wait for it through the normal result path, the count by kind,
 * and what /healthz says. The whole, through a real worker process, is spec/integration/containment.process.test.ts.
 */
import { EventEmitter } from 'node:events';
import { healthOf } from '../../lib/control/stall-watch.js';
import { ContainedErrors, currentRun, inRunScope, type RunScope } from '../../lib/worker/run/containment.js';
import { Deadlines } from '../../lib/worker/run/deadlines.js';
import { RunControl, runWithLimits } from '../../lib/worker/run/execute.js';

const scope = (task: string): RunScope => ({ task, id: `${task}-id`, fail: () => false });

describe('the run scope (AsyncLocalStorage)', () => {
  test('is seen by the timers, promises and emitters a run starts, and by nothing outside it', async () => {
    const seen: (string | undefined)[] = [];
    await inRunScope(scope('a'), async () => {
      await new Promise<void>((r) =>
        setTimeout(() => {
          seen.push(currentRun()?.task);
          r();
        }, 1),
      );
      await Promise.resolve().then(() => seen.push(currentRun()?.task));
      const emitter = new EventEmitter();
      emitter.on('x', () => seen.push(currentRun()?.task));
      setImmediate(() => emitter.emit('x'));
      await new Promise((r) => setImmediate(r));
    });
    await inRunScope(
      scope('b'),
      () => new Promise<void>((r) => setTimeout(() => (seen.push(currentRun()?.task), r()), 1)),
    );
    expect(seen).toEqual(['a', 'a', 'a', 'b']);
    expect(currentRun()).toBeUndefined();
  });
});

describe("a run's fail (RunControl.fail, under runWithLimits)", () => {
  const limits = { soft: null, hard: null };

  test('ends the wait for the run with the error, and aborts its signal so that it may stop', async () => {
    const control = new RunControl();
    const error = new Error('thrown from a timer');
    let accepted: boolean | undefined;
    const result = runWithLimits(
      () =>
        new Promise(() => {
          setTimeout(() => (accepted = control.fail(error)), 5);
        }),
      limits,
      control,
      new Deadlines(),
    );
    await expect(result).resolves.toEqual({ ok: false, error });
    expect(accepted).toBe(true);
    expect(control.signal.aborted).toBe(true);
    expect(control.signal.reason).toBe(error);
  });

  test('once the run has ended, a late error changes nothing and is refused', async () => {
    const control = new RunControl();
    await expect(runWithLimits(async () => 'done', limits, control, new Deadlines())).resolves.toEqual({
      ok: true,
      value: 'done',
    });
    expect(control.fail(new Error('late'))).toBe(false);
    expect(control.signal.aborted).toBe(false);
  });

  test('the first ending wins: a run that already failed on its own is not failed again', async () => {
    const control = new RunControl();
    const own = new Error('its own');
    let second: boolean | undefined;
    const result = await runWithLimits(
      async () => {
        setTimeout(() => (second = control.fail(new Error('escaped'))), 0);
        throw own;
      },
      limits,
      control,
      new Deadlines(),
    );
    expect(result).toEqual({ ok: false, error: own });
    await new Promise((r) => setTimeout(r, 5));
    expect(second).toBe(false);
  });
});

describe('ContainedErrors and /healthz', () => {
  test('counts by kind; /healthz names the kinds seen without failing the probe', () => {
    const c = new ContainedErrors();
    const base = { maxDelayMs: 10, livenessMs: 5000, lastStall: null, now: 0, degradedForMs: 60_000 };
    expect(c.summary()).toBe('');
    expect(healthOf({ ...base, contained: c.summary() })).toEqual({ code: 200, body: 'ok\n' });
    c.add('task_uncaught');
    c.add('task_uncaught');
    c.add('orphan_rejection');
    expect(c.total).toBe(3);
    expect(healthOf({ ...base, contained: c.summary() })).toEqual({
      code: 200,
      body: 'ok\ncontained errors since start: task_uncaught 2, orphan_rejection 1\n',
    });
    expect(healthOf({ ...base, maxDelayMs: 6000, contained: c.summary() }).code).toBe(503);
  });
});
