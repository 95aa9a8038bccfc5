/**
 * `smarter-worker tasks [--contract]`: every task this worker registers, with what changes how it is run
 * (queue, retry policy, time limits, whether it waits by checking again, whether a final failure keeps its
 * message in the dead-letter queue); with `--contract`, each of Smarter's task names and who serves it
 * here: implemented, forwarded (and where to), or rejected.
 */
import { BUILTIN_TASKS } from '../../lib/registry/builtins.js';
import { ANY_QUEUE, type AnyTask, type RetryPolicy } from '../../lib/registry/define-task.js';
import { Registry } from '../../lib/registry/registry.js';
import type { UnknownTaskPolicy } from '../../lib/worker/intake/forward.js';
import { DEFAULT_BACKOFF_MAX, DEFAULT_MAX_RETRIES, DEFAULT_RETRY_DELAY } from '../../lib/worker/run/retry.js';
import { SMARTER_CATALOG } from '../catalog.js';
import type { SmarterTaskSettings } from '../env/task-env.js';
import { smarterTasks } from '../index.js';

export const TASKS_FLAGS = { strings: [], booleans: ['contract'] } as const;

export interface TasksConfig extends SmarterTaskSettings {
  taskTimeLimit: number | null;
  taskSoftTimeLimit: number | null;
  unknownTasks: UnknownTaskPolicy;
}

export function describeRetry(r: RetryPolicy | undefined): string {
  if (r?.autoretryFor === undefined) return 'no autoretry';
  const max = r.maxRetries === undefined ? DEFAULT_MAX_RETRIES : r.maxRetries;
  const what = r.autoretryFor === 'all' ? 'every error' : 'some errors';
  const backoff = r.retryBackoff ?? false;
  const delay =
    backoff === false || backoff === 0
      ? `every ${r.defaultRetryDelay ?? DEFAULT_RETRY_DELAY} s`
      : `backoff ${backoff === true ? 1 : Math.trunc(Math.max(1, backoff))} s × 2^n ≤ ${r.retryBackoffMax ?? DEFAULT_BACKOFF_MAX} s${r.retryJitter === false ? '' : ', jitter'}`;
  return `autoretry ${what}, ${max === null ? 'forever' : `max ${max}`}, ${delay}`;
}

function limits(t: AnyTask<unknown>, c: TasksConfig): string {
  const s = (v: number | null | undefined) => (v === null || v === undefined ? 'none' : `${v} s`);
  return `soft ${s(t.softTimeLimit ?? c.taskSoftTimeLimit)}, hard ${s(t.timeLimit ?? c.taskTimeLimit)}`;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export function tasksTable(c: TasksConfig): string {
  const registry = new Registry<unknown>([...BUILTIN_TASKS, ...(smarterTasks(c) as ReadonlyArray<AnyTask<unknown>>)]);
  const rows = registry.names().map((name) => {
    const t = registry.get(name);
    return [
      name,
      t.queue === ANY_QUEUE ? '(any)' : t.queue,
      describeRetry(t.retry),
      limits(t, c),
      t.checks ? `checkAgain, ${t.checks.maxAttempts} checks` : 'no',
      t.deadLetterOnExhaustion ? 'yes' : 'no',
    ];
  });
  return table(['task', 'queue', 'retry', 'time limits', 'waits', 'dead-letter on failure'], rows);
}

/** Smarter's task names (tasks/catalog.ts), each implemented here, forwarded, or rejected. */
/** `ours`: the names implemented here (every Smarter task now; a test passes fewer to see forwarding). */
export function contractTable(
  c: TasksConfig,
  ours: ReadonlySet<string> = new Set(smarterTasks(c).map((t) => t.name)),
): string {
  const rows = [...SMARTER_CATALOG].map(([name, kind]) => {
    const how = ours.has(name)
      ? 'implemented'
      : c.unknownTasks.mode === 'forward'
        ? `forwarded to ${c.unknownTasks.queue}`
        : 'rejected (NotRegistered)';
    return [name, `${kind} (${kind === 'operational' ? c.operationalQueue : c.infrastructureQueue})`, how];
  });
  const count = (prefix: string) => rows.filter((r) => r[2]?.startsWith(prefix)).length;
  return [
    table(['Smarter task', 'queue', 'here'], rows),
    `${rows.length} tasks: ${count('implemented')} implemented, ${count('forwarded')} forwarded, ${count('rejected')} rejected`,
  ].join('\n');
}

export function tasksCommand(own: Record<string, string | true>, c: TasksConfig, out: (s: string) => void): number {
  out(tasksTable(c));
  if (own.contract === true) out(`\n${contractTable(c)}`);
  return 0;
}
