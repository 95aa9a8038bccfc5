import { type AckPolicy, type Outcome, decide } from '../../lib/worker/settle/decide.js';

const early: AckPolicy = { acksLate: false, acksOnFailureOrTimeout: true };
const strict: AckPolicy = { acksLate: true, acksOnFailureOrTimeout: false };
const keepsRecords: AckPolicy = { ...early, deadLetterOnFailure: true };

describe('decide: what happens to a message after each outcome', () => {
  test.each<[Outcome, AckPolicy, string, boolean]>([
    [{ kind: 'undecodable' }, early, 'ack', true],
    [{ kind: 'refused' }, early, 'reject', true],
    [{ kind: 'not-registered' }, early, 'reject', true],
    [{ kind: 'revoked' }, early, 'ack', false],
    [{ kind: 'succeeded' }, strict, 'ack', false],
    [{ kind: 'retried' }, strict, 'ack', false],
    [{ kind: 'retry-unpublishable' }, early, 'reject', true],
    [{ kind: 'rejected', requeue: true }, early, 'requeue', false],
    [{ kind: 'rejected', requeue: false }, early, 'reject', true],
    [{ kind: 'ignored' }, early, 'ack', false],
    [{ kind: 'failed' }, early, 'ack', false],
    [{ kind: 'failed' }, strict, 'reject', true],
    [{ kind: 'timed-out' }, early, 'ack', false],
    [{ kind: 'timed-out' }, strict, 'requeue', false],
    [{ kind: 'cancelled' }, strict, 'requeue', false],
    [{ kind: 'forwarded' }, early, 'ack', false],
    [{ kind: 'forward-unpublished' }, early, 'requeue', false],
    [{ kind: 'offloaded' }, strict, 'ack', false],
    [{ kind: 'failed' }, keepsRecords, 'ack', true],
    [{ kind: 'timed-out' }, keepsRecords, 'ack', true],
    [{ kind: 'retried' }, keepsRecords, 'ack', false],
    [{ kind: 'succeeded' }, keepsRecords, 'ack', false],
  ])('%j with %j → %s (dead-letter copy: %s)', (outcome, policy, reply, deadLetter) => {
    expect(decide(outcome, policy)).toEqual({ reply, deadLetter });
  });

  test('nothing Celery would drop is dropped without a dead-letter copy', () => {
    for (const kind of ['undecodable', 'refused', 'not-registered', 'retry-unpublishable'] as const) {
      const d = decide({ kind }, early);
      expect(d.reply === 'requeue' || d.deadLetter).toBe(true);
    }
  });
});
