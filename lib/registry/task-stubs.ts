/**
 * Tasks known at start by their name and queue only, their code loaded when a message first names one of them:
 * an application of many tasks need not compile them all, nor build their schemas, before it consumes. A group
 * of stubs shares one loader (one import of the module that defines them), run once.
 */
import { TaskDefinitionError } from '../errors.js';
import type { AnyTask } from './define-task.js';

export interface TaskStub<D = unknown> {
  name: string;
  queue: string;
  /** The task's definition; rejects when its code cannot be loaded or does not define it on `queue`. */
  load(): Promise<AnyTask<D>>;
}

/**
 * Stubs for `entries`, all defined by what `load` returns. Each stub checks, once loaded, that its task is
 * there and declares the stub's queue: a name or queue that differs is a defect of the application.
 */
export function taskStubs<D>(
  entries: ReadonlyArray<{ name: string; queue: string }>,
  load: () => Promise<ReadonlyArray<AnyTask<D>>>,
): TaskStub<D>[] {
  let loaded: Promise<ReadonlyArray<AnyTask<D>>> | undefined;
  return entries.map(({ name, queue }) => ({
    name,
    queue,
    async load() {
      if (!loaded) {
        const pending = load();
        loaded = pending;
        // A load that failed is tried again by the next ask.
        pending.catch(() => {
          if (loaded === pending) loaded = undefined;
        });
      }
      const task = (await loaded).find((t) => t.name === name);
      if (!task) throw new TaskDefinitionError(name, 'its module does not define it');
      if (task.queue !== queue) {
        throw new TaskDefinitionError(name, `declared for ${task.queue}, registered for ${queue}`);
      }
      return task;
    },
  }));
}
