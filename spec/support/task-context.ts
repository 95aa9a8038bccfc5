/** Runs one task in-process, the way the worker would bind its Celery arguments, with a context for tests. */
import { randomUUID } from 'node:crypto';
import { nullLogger } from '../../lib/logger.js';
import { bindArguments } from '../../lib/registry/args.js';
import type { TaskContext } from '../../lib/registry/context.js';
import type { AnyTask } from '../../lib/registry/define-task.js';

export function testContext<D>(deps: D, name = 'test'): TaskContext<D> {
  const refuse = () => Promise.reject(new Error('not available in an in-process test'));
  // Each run its own task id, as each message has: effects written once per task id (tasks/db/once.ts) need it.
  const id = randomUUID();
  return {
    id,
    name,
    queue: 'test',
    retries: 0,
    rootId: id,
    parentId: null,
    group: null,
    eta: null,
    expires: null,
    replyTo: null,
    redelivered: false,
    hostname: 'test@host',
    headers: {},
    logger: nullLogger(),
    signal: new AbortController().signal,
    deps,
    retry: refuse,
    applyAsync: refuse,
    applySignature: refuse,
    checkAgain: refuse,
    getResult: () => Promise.resolve(null),
    waitingOn: () => undefined,
  };
}

/** Binds `(args, kwargs)` as the worker does, then runs the task. */
export async function call<D>(
  task: AnyTask<D>,
  deps: D,
  args: unknown[] = [],
  kwargs: Record<string, unknown> = {},
): Promise<unknown> {
  const params = bindArguments(task, args, kwargs);
  return task.run(params, testContext(deps, task.name));
}
