/** The one registry of tasks: built once at start-up; a duplicate name is a start-up error. */
import { AlreadyRegisteredError, NotRegisteredError } from '../errors.js';
import type { AnyTask } from './define-task.js';

export class Registry<D = unknown> {
  private readonly tasks = new Map<string, AnyTask<D>>();

  constructor(tasks: ReadonlyArray<AnyTask<D>> = []) {
    for (const t of tasks) this.add(t);
  }

  add(task: AnyTask<D>): void {
    if (this.tasks.has(task.name)) throw new AlreadyRegisteredError(task.name);
    this.tasks.set(task.name, task);
  }

  get(name: string): AnyTask<D> {
    const t = this.tasks.get(name);
    if (!t) throw new NotRegisteredError(name);
    return t;
  }

  find(name: string): AnyTask<D> | undefined {
    return this.tasks.get(name);
  }

  names(): string[] {
    return [...this.tasks.keys()].sort();
  }

  byQueue(queue: string): AnyTask<D>[] {
    return [...this.tasks.values()].filter((t) => t.queue === queue);
  }

  queues(): string[] {
    return [...new Set([...this.tasks.values()].map((t) => t.queue))].sort();
  }
}
