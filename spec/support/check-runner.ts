/**
 * Runs infrastructure tasks in-process as a worker would, without a broker: each `checkAgain` and `applyAsync`
 * becomes a pending message (planned by the worker's own `planCheckAgain`, its kwargs JSON round-tripped as on
 * the wire), and `drain` runs them in order, so a test walks a whole deployment in milliseconds.
 */
import { randomUUID } from 'node:crypto';
import { type Logger, nullLogger } from '../../lib/logger.js';
import { bindArguments } from '../../lib/registry/args.js';
import { planCheckAgain } from '../../lib/registry/checks.js';
import {
  type ApplyOptions,
  type CheckAgainOptions,
  Rescheduled,
  type TaskContext,
} from '../../lib/registry/context.js';
import type { AnyTask } from '../../lib/registry/define-task.js';
import { testContext } from './task-context.js';

export interface Sent {
  id: string;
  name: string;
  args: unknown[];
  kwargs: Record<string, unknown>;
  countdown: number;
  queue?: string;
}

export interface Run extends Sent {
  result?: unknown;
  error?: Error;
}

export class CheckRunner<D> {
  readonly pending: Sent[] = [];
  readonly runs: Run[] = [];
  private seq = 0;
  /** Ids unique across runners on one database: charges are written once per task id (tasks/db/once.ts). */
  private readonly tag = randomUUID().slice(0, 8);

  constructor(
    private readonly tasks: readonly AnyTask<D>[],
    private readonly deps: D,
    private readonly logger: Logger = nullLogger(),
  ) {}

  private task(name: string): AnyTask<D> {
    const t = this.tasks.find((x) => x.name === name);
    if (!t) throw new Error(`no task ${name}`);
    return t;
  }

  send(
    name: string,
    kwargs: Record<string, unknown> = {},
    args: unknown[] = [],
    countdown = 0,
    queue?: string,
  ): string {
    const id = `run-${this.tag}-${++this.seq}`;
    this.pending.push({
      id,
      name,
      args,
      kwargs: JSON.parse(JSON.stringify(kwargs)) as Record<string, unknown>,
      countdown,
      queue,
    });
    return id;
  }

  /** Runs one message; a thrown error is recorded (a FAILURE), never rethrown. */
  async runOne(msg: Sent): Promise<Run> {
    const task = this.task(msg.name);
    const run: Run = { ...msg };
    let bound: unknown;
    const ctx: TaskContext<D> = {
      ...testContext(this.deps, msg.name),
      id: msg.id,
      queue: task.queue,
      rootId: msg.id,
      logger: this.logger,
      applyAsync: (
        target: string | AnyTask<never>,
        args: unknown[] = [],
        kwargs: unknown = {},
        options: ApplyOptions = {},
      ) =>
        Promise.resolve(
          typeof target === 'string'
            ? this.send(target, kwargs as Record<string, unknown>, args, options.countdown ?? 0, options.queue)
            : this.send(
                target.name,
                kwargs as Record<string, unknown>,
                args,
                options.countdown ?? 0,
                options.queue ?? target.queue,
              ),
        ),
      checkAgain: (o: CheckAgainOptions) => {
        const { args, kwargs, attempt } = planCheckAgain(msg.name, task.checks, bound, o, msg.id, task.argNames);
        const id = this.send(msg.name, kwargs, args, o.after, task.queue);
        return Promise.resolve(new Rescheduled(id, attempt, o.after));
      },
    };
    try {
      bound = bindArguments(task, msg.args, msg.kwargs);
      run.result = await task.run(bound, ctx);
    } catch (err) {
      run.error = err instanceof Error ? err : new Error(String(err));
    }
    this.runs.push(run);
    return run;
  }

  /** Runs pending messages in order until none is left; `before` may change the world before each run. */
  async drain(before?: (msg: Sent, runs: Run[]) => void | Promise<void>, limit = 500): Promise<Run[]> {
    const start = this.runs.length;
    for (let i = 0; i < limit; i++) {
      const msg = this.pending.shift();
      if (!msg) return this.runs.slice(start);
      await before?.(msg, this.runs);
      await this.runOne(msg);
    }
    throw new Error(`still running after ${limit} messages`);
  }

  runsOf(name: string): Run[] {
    return this.runs.filter((r) => r.name === name);
  }
}
