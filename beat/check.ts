/**
 * ADR-030's third rule, checked before anything runs: every Beat entry names a task that exists, sends it to
 * the queue that task declares, and that queue is consumed by a worker deployment. Each problem names the
 * entry, the task and the queue.
 */
import type { QueueKind } from '../tasks/catalog.js';
import type { Consumers } from './deployments.js';
import type { BeatEntry, ScheduleQueues } from '../tasks/beat-schedule.js';

export interface CheckInput {
  entries: BeatEntry[];
  /** Every task Smarter registers, with its queue kind. */
  catalog: ReadonlyMap<string, QueueKind>;
  queues: ScheduleQueues;
  /** Tasks this worker implements, with the queue each declares. */
  implemented: ReadonlyMap<string, string>;
  /** What the deployments consume; empty when there is nothing to read. */
  consumers: Consumers;
}

export interface CheckReport {
  ok: boolean;
  lines: string[];
  problems: string[];
}

export function checkSchedule(i: CheckInput): CheckReport {
  const problems: string[] = [];
  const lines: string[] = [];
  for (const e of i.entries) {
    const where = `entry ${JSON.stringify(e.name)}: task ${e.task}, queue ${e.options.queue ?? '(none)'}`;
    const kind = i.catalog.get(e.task);
    const ours = i.implemented.get(e.task);
    const declared =
      ours ??
      (kind === 'operational'
        ? i.queues.operationalQueue
        : kind === 'infrastructure'
          ? i.queues.infrastructureQueue
          : undefined);
    const own: string[] = [];
    if (declared === undefined) own.push(`task ${e.task} is not registered by any worker (not a Smarter task)`);
    if (e.options.queue === undefined) {
      own.push(`it names no queue, so Beat would send it to "celery", which no worker consumes`);
    } else if (declared !== undefined && e.options.queue !== declared) {
      own.push(`task ${e.task} declares queue ${declared}, not ${e.options.queue}`);
    }
    if (e.options.queue !== undefined) {
      for (const [source, consumed] of i.consumers) {
        if (!consumed.has(e.options.queue)) {
          own.push(
            `no worker deployment in ${source} consumes queue ${e.options.queue} (consumed there: ${[...consumed.keys()].join(', ') || 'none'})`,
          );
        }
      }
    }
    if (own.length > 0) {
      problems.push(...own.map((p) => `${where}: ${p}`));
      lines.push(`FAIL ${where}`, ...own.map((p) => `     - ${p}`));
    } else {
      const by = ours !== undefined ? 'smarter-worker' : 'Python workers only (not implemented here yet)';
      const at = [...i.consumers]
        .map(([source, c]) => `${source}: ${(c.get(e.options.queue ?? '') ?? []).join(', ')}`)
        .join('; ');
      lines.push(`ok   ${where}; served by ${by}${at ? `; consumed by ${at}` : ''}`);
    }
  }
  if (i.consumers.size === 0) lines.push('note: no chart or compose file found, so queue consumption was not checked');
  lines.push(
    problems.length === 0
      ? `${i.entries.length} entries: the queue contract holds`
      : `${problems.length} problem(s) in ${i.entries.length} entries`,
  );
  return { ok: problems.length === 0, lines, problems };
}
