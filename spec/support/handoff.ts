/**
 * The retry handoff of the interop tests: `test.handoff(7, k='v')` with a custom header, which our worker runs
 * first and retries (spec/support/test-tasks.ts), and a Python worker then runs (spec/interop/python/pyworker.py).
 */
export const HANDOFF_BODY = JSON.stringify([[7], { k: 'v' }, {}]);

export const handoffHeaders = (id: string) => ({
  lang: 'py',
  task: 'test.handoff',
  id,
  root_id: id,
  retries: 0,
  'x-custom': 'kept',
});

/** What the Python worker's run of the retry returns: the same id, retries = 1, the custom header intact. */
export const handedOver = (id: string) => ({
  id,
  retries: 1,
  parent_id: id,
  root_id: id,
  args: [7],
  kwargs: { k: 'v' },
  custom: 'kept',
  worker: 'python',
});
