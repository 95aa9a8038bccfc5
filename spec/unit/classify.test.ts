import {
  BrokerError,
  IgnoreTaskError,
  PythonException,
  RejectTaskError,
  RetryTaskError,
  RetryUnpublishableError,
  TaskArgumentsError,
  TaskRevokedError,
  TimeLimitExceededError,
} from '../../lib/errors.js';
import { autoretryable, classify } from '../../lib/worker/run/classify.js';
import { decide } from '../../lib/worker/settle/decide.js';
import { TRANSITIONS, canMove, move } from '../../lib/worker/state.js';

const policy = { acksLate: true, acksOnFailureOrTimeout: true };

test('errors are classified by their code, whatever class they extend', () => {
  expect(classify(new RetryTaskError('again', undefined, 1))).toEqual({ kind: 'retried' });
  expect(classify(new RetryUnpublishableError('no broker'))).toEqual({ kind: 'retry-unpublishable' });
  expect(classify(new RejectTaskError('back', true))).toEqual({ kind: 'rejected', requeue: true });
  expect(classify(new RejectTaskError('away', false))).toEqual({ kind: 'rejected', requeue: false });
  expect(classify(new TaskRevokedError('revoked'))).toEqual({ kind: 'revoked' });
  expect(classify(new IgnoreTaskError())).toEqual({ kind: 'ignored' });
  expect(classify(new PythonException('ValueError', 'builtins', 'x'))).toEqual({ kind: 'failed' });
  expect(classify(new BrokerError('down'))).toEqual({ kind: 'failed' });
  expect(classify(new Error('plain'))).toEqual({ kind: 'failed' });
  expect(classify('thrown text')).toEqual({ kind: 'failed' });
});

test('an abandoned run fails as timed out, but a revoke that terminated it stays a revoke', () => {
  expect(classify(new TimeLimitExceededError(1), true)).toEqual({ kind: 'timed-out' });
  expect(classify(new TaskRevokedError('revoked'), true)).toEqual({ kind: 'revoked' });
});

test('a code that is not ours (a library error) is a plain failure', () => {
  expect(classify(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toEqual({ kind: 'failed' });
});

test('an unpublishable retry is dead-lettered and rejected, never requeued; a requeueing reject is not', () => {
  expect(decide(classify(new RetryUnpublishableError('no broker')), policy)).toEqual({
    reply: 'reject',
    deadLetter: true,
  });
  expect(decide(classify(new RejectTaskError('back', true)), policy)).toEqual({ reply: 'requeue', deadLetter: false });
});

test('only plain failures are retried automatically (not bad arguments, retries, rejects, ignores)', () => {
  expect(autoretryable(new PythonException('ValueError', 'builtins', 'x'))).toBe(true);
  expect(autoretryable(new TaskArgumentsError('t', ['bad']))).toBe(false);
  expect(autoretryable(new RetryUnpublishableError('no broker'))).toBe(false);
  expect(autoretryable(new RejectTaskError('r', false))).toBe(false);
  expect(autoretryable(new IgnoreTaskError())).toBe(false);
});

test('the worker state table: start once, shutdown from any state before STOPPED, nothing after', () => {
  expect(move('INITIALIZED', 'STARTING')).toBe('STARTING');
  expect(() => move('STARTING', 'STARTING')).toThrow(/cannot go from STARTING to STARTING/);
  expect(() => move('RUNNING', 'STARTING')).toThrow(expect.objectContaining({ code: 'WORKER_STATE' }) as Error);
  expect(() => move('STOPPED', 'STARTING')).toThrow(/STOPPED/);
  for (const s of ['INITIALIZED', 'STARTING', 'RUNNING'] as const) expect(canMove(s, 'DRAINING')).toBe(true);
  expect(TRANSITIONS.STOPPED).toEqual([]);
});
