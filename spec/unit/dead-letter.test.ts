import { ReportedOnce, copyWithBackoff } from '../../lib/worker/settle/dead-letter.js';

const fast = { attempts: 4, initialMs: 5, maxMs: 10 };

test('a copy that keeps failing is tried a bounded number of times with growing delays, then given up', async () => {
  let calls = 0;
  const delays: Array<number | null> = [];
  const r = await copyWithBackoff(
    () => {
      calls++;
      return Promise.reject(new RangeError('too big'));
    },
    () => true,
    (_a, _e, next) => delays.push(next),
    fast,
  );
  expect(r).toMatchObject({ ok: false, attempts: 4, error: { message: 'too big' } });
  expect(calls).toBe(4);
  expect(delays).toEqual([5, 10, 10, null]);
});

test('a copy that succeeds on a later attempt is a success', async () => {
  let calls = 0;
  const r = await copyWithBackoff(
    async () => {
      if (++calls < 3) throw new Error('not yet');
    },
    () => true,
    () => undefined,
    fast,
  );
  expect(r).toEqual({ ok: true });
  expect(calls).toBe(3);
});

test('retrying stops once the message is gone (its channel closed)', async () => {
  let calls = 0;
  const r = await copyWithBackoff(
    () => Promise.reject(new Error(`fail ${++calls}`)),
    () => calls < 2,
    () => undefined,
    fast,
  );
  expect(r).toMatchObject({ ok: false, attempts: 2 });
});

test('each message is reported once', () => {
  const once = new ReportedOnce(2);
  expect([once.first('a'), once.first('a'), once.first('b'), once.first('c'), once.first('a')]).toEqual([
    true,
    false,
    true,
    true,
    true,
  ]);
});
