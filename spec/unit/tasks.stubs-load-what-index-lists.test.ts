/**
 * The shipped worker registers Smarter's tasks as stubs (tasks/stubs.ts, from the catalog) and loads each app on
 * first use; the listings and the other tests use tasks/index.ts. Both must give the same tasks, on the same queues,
 * with the same options.
 */
import type { AnyTask } from '../../lib/registry/define-task.js';
import { SMARTER_CATALOG } from '../../tasks/catalog.js';
import { smarterTasks } from '../../tasks/index.js';
import { smarterTaskStubs } from '../../tasks/stubs.js';

const settings = { operationalQueue: 'op_q', infrastructureQueue: 'infra_q', maxRetries: 4, retryBackoff: true };

/** What a task declares, functions left out (an `autoretryFor` predicate is compared by its presence). */
const shape = (t: AnyTask<unknown>) =>
  JSON.parse(JSON.stringify(t, (k, v: unknown) => (typeof v === 'function' ? `fn:${k}` : v))) as unknown;

test("every stub is one of index.ts's tasks on its queue, and loads to that task's definition", async () => {
  const eager = smarterTasks(settings);
  const stubs = smarterTaskStubs(settings);
  expect(stubs.map((s) => s.name).sort()).toEqual(eager.map((t) => t.name).sort());
  expect(stubs).toHaveLength(SMARTER_CATALOG.size);
  for (const stub of stubs) {
    const twin = eager.find((t) => t.name === stub.name);
    expect([stub.name, stub.queue]).toEqual([stub.name, twin?.queue]);
    const loaded = await stub.load();
    expect(shape(loaded)).toEqual(shape(twin as AnyTask<unknown>));
  }
});
