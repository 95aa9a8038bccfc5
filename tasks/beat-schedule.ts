/**
 * Smarter's Beat schedule (`smarter/workers/celerybeat.py`, line B): eleven plain intervals, each naming the
 * queue of its task's kind; the queue names come from the same settings the workers and producers read.
 */
import { type Schedule, every } from '../lib/beat/schedules.js';

export interface BeatEntry {
  name: string;
  task: string;
  schedule: Schedule;
  args: unknown[];
  kwargs: Record<string, unknown>;
  options: { queue?: string; expires?: number; priority?: number };
}

export interface ScheduleQueues {
  operationalQueue: string;
  infrastructureQueue: string;
}

const MIN = 60;
const HOUR = 3600;

export function smarterSchedule(q: ScheduleQueues): BeatEntry[] {
  const op = { queue: q.operationalQueue };
  const infra = { queue: q.infrastructureQueue };
  const e = (name: string, task: string, seconds: number, options: BeatEntry['options']): BeatEntry => ({
    name,
    task: `smarter.apps.${task}`,
    schedule: every(seconds),
    args: [],
    kwargs: {},
    options,
  });
  return [
    e('aggregate-prompt-history', 'prompt.tasks.aggregate_prompt_history', 12 * HOUR, op),
    e('aggregate-charges', 'account.tasks.aggregate_records', HOUR, op),
    e('evaluate-budget-constraints', 'account.tasks.evaluate_budget_constraints', HOUR, op),
    e('charge-llmhost-computes', 'llmhost.tasks.charge_llmhost_computes', HOUR, op),
    e('purge-guardrail-events', 'guardrail.tasks.purge_guardrail_events', 24 * HOUR, op),
    e('refresh-llmhost-status', 'llmhost.tasks.refresh_llmhost_status', 5 * MIN, infra),
    e('reconcile-llmhost-computes', 'llmhost.tasks.reconcile_llmhost_computes', 5 * MIN, infra),
    e('reconcile-vectorstores', 'vectorstore.tasks.reconcile_vectorstores', 5 * MIN, infra),
    e('maintain-vectorstores', 'vectorstore.tasks.maintain_vectorstores', HOUR, infra),
    e('sync-infrastructure-inventory', 'infrastructure.tasks.sync_infrastructure_inventory', 15 * MIN, infra),
    e('refresh-mcpclients', 'mcpclient.tasks.refresh_mcpclients', HOUR, op),
  ];
}
