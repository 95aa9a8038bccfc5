/** `planCheckAgain`, the one rule for what `ctx.checkAgain` sends next, including staged checks. */
import { planCheckAgain } from '../../lib/registry/checks.js';

const checks = { maxAttempts: 30, firstRunIdParam: 'task_id' };

test("the next run carries the bound arguments, the update, attempt + 1 and the first run's id", () => {
  expect(
    planCheckAgain('t', checks, { x: 1, attempt: 4, task_id: null }, { after: 60, update: { x: 2 } }, 'first'),
  ).toEqual({
    args: [],
    kwargs: { x: 2, attempt: 5, task_id: 'first' },
    attempt: 5,
  });
  expect(planCheckAgain('t', checks, { attempt: 5, task_id: 'first' }, { after: 60 }, 'sixth').kwargs.task_id).toBe(
    'first',
  );
});

test('gives up when the next attempt would reach the limit: 30 runs in all', () => {
  expect(() => planCheckAgain('t', checks, { attempt: 28 }, { after: 60 }, 'id')).not.toThrow();
  expect(() => planCheckAgain('t', checks, { attempt: 29 }, { after: 60 }, 'id')).toThrow(
    expect.objectContaining({ code: 'TASK_GAVE_UP' }) as Error,
  );
});

test('a new stage counts from 0 with its own limit', () => {
  // The certificate stage's 29th run found the certificate: the domain stage starts, its own check 0 of 48.
  const next = planCheckAgain(
    't',
    checks,
    { attempt: 29, stage: 'certificate' },
    { after: 300, update: { stage: 'domain' }, attempt: 0, maxAttempts: 48 },
    'id',
  );
  expect(next.kwargs).toMatchObject({ stage: 'domain', attempt: 1 });
  expect(() => planCheckAgain('t', checks, { attempt: 46 }, { after: 300, maxAttempts: 48 }, 'id')).not.toThrow();
  expect(() => planCheckAgain('t', checks, { attempt: 47 }, { after: 300, maxAttempts: 48 }, 'id')).toThrow(
    /gave up after 48 attempts/,
  );
});

test('a positional policy sends every argument in argNames order, attempt + 1 among them, and no kwargs', () => {
  // Smarter's reconcile_llmhost_compute: apply_async((compute_id, attempt + 1), countdown=30), attempt from 1.
  const positional = { maxAttempts: 61, positional: true };
  expect(
    planCheckAgain('t', positional, { compute_id: 7, attempt: 1 }, { after: 30 }, 'id', ['compute_id', 'attempt']),
  ).toEqual({
    args: [7, 2],
    kwargs: {},
    attempt: 2,
  });
  expect(
    planCheckAgain('t', positional, { compute_id: 7, attempt: 59 }, { after: 30 }, 'id', ['compute_id', 'attempt'])
      .args,
  ).toEqual([7, 60]);
  expect(() =>
    planCheckAgain('t', positional, { compute_id: 7, attempt: 60 }, { after: 30 }, 'id', ['compute_id', 'attempt']),
  ).toThrow(/gave up/);
});
