/**
 * The one registry of tasks: built once at start-up; a duplicate name is a start-up error. A task given as a
 * stub (task-stubs.ts) is known by its name and queue until `load` brings in its definition.
 */
import { AlreadyRegisteredError, NotRegisteredError } from '../errors.js';
import type { AnyTask } from './define-task.js';
import type { TaskStub } from './task-stubs.js';

export class Registry<D = unknown> {
  private readonly tasks = new Map<string, AnyTask<D>>();
  private readonly stubs = new Map<string, TaskStub<D>>();
  private readonly loading = new Map<string, Promise<AnyTask<D>>>();

  /** `prepare`: applied to a stub's task once loaded, as the caller applied it to the `tasks` it gives. */
  constructor(
    tasks: ReadonlyArray<AnyTask<D>> = [],
    stubs: ReadonlyArray<TaskStub<D>> = [],
    private readonly prepare: (task: AnyTask<D>) => AnyTask<D> = (t) => t,
  ) {
    for (const t of tasks) this.add(t);
    for (const s of stubs) {
      if (this.has(s.name)) throw new AlreadyRegisteredError(s.name);
      this.stubs.set(s.name, s);
    }
  }

  add(task: AnyTask<D>): void {
    if (this.has(task.name)) throw new AlreadyRegisteredError(task.name);
    this.tasks.set(task.name, task);
  }

  /** Registered, loaded or not. */
  has(name: string): boolean {
    return this.tasks.has(name) || this.stubs.has(name);
  }

  /** The queue a registered task declares, loaded or not. */
  queueOf(name: string): string | undefined {
    return (this.tasks.get(name) ?? this.stubs.get(name))?.queue;
  }

  get(name: string): AnyTask<D> {
    const t = this.tasks.get(name);
    if (!t) throw new NotRegisteredError(name);
    return t;
  }

  /** A loaded task; undefined for a stub not loaded yet (see `load`) and for an unknown name. */
  find(name: string): AnyTask<D> | undefined {
    return this.tasks.get(name);
  }

  /** The task, its stub loaded first if need be (once, however many ask); undefined for an unknown name. */
  async load(name: string): Promise<AnyTask<D> | undefined> {
    const t = this.tasks.get(name);
    if (t) return t;
    const stub = this.stubs.get(name);
    if (!stub) return undefined;
    let pending = this.loading.get(name);
    if (!pending) {
      pending = stub.load().then((task) => {
        const ready = this.prepare(task);
        this.tasks.set(name, ready);
        this.stubs.delete(name);
        return ready;
      });
      // A load that failed may be tried again by the next message.
      pending.catch(() => this.loading.delete(name));
      this.loading.set(name, pending);
    }
    return pending;
  }

  names(): string[] {
    return [...this.tasks.keys(), ...this.stubs.keys()].sort();
  }
}
