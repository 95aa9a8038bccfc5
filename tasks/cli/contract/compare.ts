/**
 * Smarter's source against this worker: one line per difference, in the groups an operator acts on. What a
 * Smarter producer can send must be accepted here and mean the same: so an argument this worker adds with a
 * default, or one Smarter requires that is optional here, is no difference; a renamed, moved or newly required
 * one is.
 */
import type { BeatEntry } from '../../beat-schedule.js';
import type { RetryPolicy } from '../../../lib/registry/define-task.js';
import { DEFAULT_MAX_RETRIES } from '../../../lib/worker/run/retry.js';
import { SMARTER_SETTINGS } from '../../settings.js';
import { type OurTask, settingKey } from './ours.js';
import type { SmarterBeatEntry, SmarterSource, SmarterTask, SmarterValue } from './smarter-source.js';

export const GROUPS = [
  'missing task',
  'extra task',
  'argument',
  'queue',
  'retry policy',
  'Beat entry',
  'setting',
] as const;
export type Group = (typeof GROUPS)[number];

export interface Difference {
  group: Group;
  /** The task, Beat entry or setting the line is about. */
  subject: string;
  message: string;
  /** Smarter's file and line, relative to the checkout, when the difference is in Smarter's source. */
  where?: string;
}

/** Celery's own default queue, where a task without `queue=` goes (Smarter sets no `task_default_queue`). */
const CELERY_DEFAULT_QUEUE = 'celery';

const show = (v: unknown) =>
  v === null || v === undefined ? 'None' : typeof v === 'string' ? `"${v}"` : JSON.stringify(v);
const known = (v: SmarterValue | null | undefined): v is SmarterValue => v !== null && v !== undefined && 'value' in v;
const describe = (v: SmarterValue) =>
  v.setting ? `smarter_settings.${v.setting}${known(v) ? ` (${show(v.value)})` : ''}` : (v.expr ?? show(v.value));

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function where(root: string, file: string, line: number): string {
  const rel = file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file;
  return `${rel}:${line}`;
}

function compareQueue(s: SmarterTask, o: OurTask, at: string): Difference[] {
  const subject = s.name;
  if (s.queue === null) {
    return o.queue === CELERY_DEFAULT_QUEUE
      ? []
      : [
          {
            group: 'queue',
            subject,
            where: at,
            message: `Smarter declares no queue (Celery's "celery"); here ${o.queue}`,
          },
        ];
  }
  if (!known(s.queue) || typeof s.queue.value !== 'string') {
    return [{ group: 'queue', subject, where: at, message: `Smarter's queue ${describe(s.queue)} cannot be resolved` }];
  }
  if (s.queue.value === o.queue) return [];
  return [{ group: 'queue', subject, where: at, message: `Smarter ${describe(s.queue)}; here ${o.queue}` }];
}

function backoffOf(v: unknown): number {
  return v === true ? 1 : typeof v === 'number' ? v : 0;
}

function compareRetry(s: SmarterTask, o: OurTask, at: string): Difference[] {
  const subject = s.name;
  const ours: RetryPolicy | undefined = o.retry?.autoretryFor === undefined ? undefined : o.retry;
  const out = (message: string): Difference => ({ group: 'retry policy', subject, where: at, message });
  if (s.autoretryFor === null) {
    return ours ? [out('Smarter does not retry automatically; here it autoretries')] : [];
  }
  const what = `autoretry_for=(${s.autoretryFor.join(', ')},)`;
  if (!ours) return [out(`Smarter ${what}; here no autoretry`)];
  const diffs: Difference[] = [];
  // A predicate here is (Exception,) less the errors retrying cannot fix (docs/tasks/llmclient.md).
  if (!(s.autoretryFor.length === 1 && s.autoretryFor[0] === 'Exception')) {
    diffs.push(
      out(
        `Smarter ${what}; here every error${typeof ours.autoretryFor === 'function' ? ' but the permanent ones' : ''}`,
      ),
    );
  }
  if (s.maxRetries !== null && !known(s.maxRetries)) {
    diffs.push(out(`Smarter's max_retries ${describe(s.maxRetries)} cannot be resolved`));
  } else {
    const sMax = s.maxRetries === null ? DEFAULT_MAX_RETRIES : s.maxRetries.value;
    const oMax = ours.maxRetries === undefined ? DEFAULT_MAX_RETRIES : ours.maxRetries;
    if (!equal(sMax, oMax)) diffs.push(out(`max_retries: Smarter ${show(sMax)}; here ${show(oMax)}`));
  }
  if (s.retryBackoff !== null && !known(s.retryBackoff)) {
    diffs.push(out(`Smarter's retry_backoff ${describe(s.retryBackoff)} cannot be resolved`));
  } else {
    const sB = s.retryBackoff === null ? false : s.retryBackoff.value;
    if (backoffOf(sB) !== backoffOf(ours.retryBackoff ?? false)) {
      diffs.push(out(`retry_backoff: Smarter ${show(sB)}; here ${show(ours.retryBackoff ?? false)}`));
    }
  }
  return diffs;
}

function compareArguments(s: SmarterTask, o: OurTask, at: string): Difference[] {
  const subject = s.name;
  const out = (message: string): Difference => ({ group: 'argument', subject, where: at, message });
  const diffs: Difference[] = [];
  if (s.params.length > 0 && o.varArgs && o.params.length === 0) {
    return [out(`Smarter names its arguments (${s.params.map((p) => p.name).join(', ')}); here only *args`)];
  }
  s.params.forEach((p, i) => {
    const mine = o.params[i];
    const position = `position ${i + 1}`;
    if (mine === undefined) {
      if (!o.varArgs) diffs.push(out(`${position}: Smarter's ${p.name} is not an argument here`));
      return;
    }
    if (mine.name !== p.name) {
      const elsewhere = o.params.findIndex((m) => m.name === p.name);
      diffs.push(
        out(
          elsewhere >= 0
            ? `${p.name}: position ${i + 1} in Smarter, ${elsewhere + 1} here`
            : `${position}: Smarter ${p.name}, here ${mine.name}`,
        ),
      );
      return;
    }
    if (p.default === undefined) return;
    if (!known(p.default)) {
      diffs.push(out(`${p.name}: Smarter's default ${describe(p.default)} cannot be resolved`));
    } else if (mine.required) {
      diffs.push(out(`${p.name}: Smarter's default is ${show(p.default.value)}; here it is required`));
    } else if (!equal(p.default.value, mine.default)) {
      diffs.push(out(`${p.name}: default ${show(p.default.value)} in Smarter, ${show(mine.default)} here`));
    }
  });
  const named = new Set([...s.params, ...s.keywordOnly].map((p) => p.name));
  for (const [i, mine] of o.params.entries()) {
    if (i < s.params.length || named.has(mine.name)) continue;
    if (mine.required && s.varkw === null) {
      diffs.push(out(`${mine.name} is required here; Smarter has no such argument`));
    }
  }
  for (const p of s.keywordOnly) {
    if (!o.anyKeyword && !o.params.some((m) => m.name === p.name)) {
      diffs.push(out(`Smarter's keyword-only ${p.name} is not an argument here`));
    }
  }
  if (s.varkw !== null && !o.anyKeyword && s.params.length === 0 && o.params.length === 0) {
    diffs.push(out(`Smarter takes **${s.varkw}; here no keyword arguments`));
  }
  return diffs;
}

export function compareTasks(smarter: SmarterSource, ours: readonly OurTask[]): Difference[] {
  const mine = new Map(ours.map((t) => [t.name, t]));
  const theirs = new Set(smarter.tasks.map((t) => t.name));
  const diffs: Difference[] = [];
  for (const s of smarter.tasks) {
    const at = where(smarter.root, s.file, s.line);
    const o = mine.get(s.name);
    if (!o) {
      diffs.push({
        group: 'missing task',
        subject: s.name,
        where: at,
        message: 'Smarter registers it; this worker does not',
      });
      continue;
    }
    diffs.push(...compareArguments(s, o, at), ...compareQueue(s, o, at), ...compareRetry(s, o, at));
  }
  for (const o of ours) {
    if (!theirs.has(o.name)) {
      diffs.push({ group: 'extra task', subject: o.name, message: 'this worker registers it; Smarter does not' });
    }
  }
  return diffs;
}

function scheduleText(e: SmarterBeatEntry['schedule']): string {
  if (e === null) return 'no schedule';
  if ('seconds' in e) return `every ${e.seconds} s`;
  if ('crontab' in e) {
    return `crontab(${Object.entries(e.crontab)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')})`;
  }
  return e.expr;
}

function ourScheduleText(e: BeatEntry): string {
  if (e.schedule.kind === 'interval') return `every ${e.schedule.seconds} s`;
  const spec = e.schedule.spec as unknown as Record<string, unknown>;
  return `crontab(${Object.entries(spec)
    .filter(([, v]) => v !== undefined && v !== '*')
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ')})`;
}

export function compareBeat(smarter: SmarterSource, ours: readonly BeatEntry[]): Difference[] {
  if (smarter.beat === null) {
    return [{ group: 'Beat entry', subject: 'celerybeat.py', message: 'Smarter has no smarter/workers/celerybeat.py' }];
  }
  const beat = smarter.beat;
  const mine = new Map(ours.map((e) => [e.name, e]));
  const theirs = new Set(beat.entries.map((e) => e.name));
  const tasks = new Set(smarter.tasks.map((t) => t.name));
  const diffs: Difference[] = [];
  for (const s of beat.entries) {
    const at = where(smarter.root, beat.file, s.line);
    const out = (message: string): Difference => ({ group: 'Beat entry', subject: s.name, where: at, message });
    if (s.task !== null && !tasks.has(s.task)) diffs.push(out(`sends ${s.task}, which Smarter does not register`));
    const o = mine.get(s.name);
    if (!o) {
      diffs.push(out(`Smarter's (${s.task ?? '?'}, ${scheduleText(s.schedule)}); smarter-beat does not send it`));
      continue;
    }
    if (s.task !== o.task) diffs.push(out(`task: Smarter ${s.task ?? '?'}; here ${o.task}`));
    const sWhen = scheduleText(s.schedule);
    const oWhen = ourScheduleText(o);
    if (sWhen !== oWhen) diffs.push(out(`schedule: Smarter ${sWhen}; here ${oWhen}`));
    const queue = s.options.queue as SmarterValue | undefined;
    const sQueue = queue && known(queue) ? queue.value : undefined;
    if (queue && !known(queue)) diffs.push(out(`Smarter's queue option ${describe(queue)} cannot be resolved`));
    else if (!equal(sQueue, o.options.queue)) {
      diffs.push(out(`queue: Smarter ${show(sQueue)}; here ${show(o.options.queue)}`));
    }
    for (const key of Object.keys(s.options).filter((k) => k !== 'queue')) {
      diffs.push(out(`Smarter's option ${key} is not sent here`));
    }
    for (const [key, v] of [
      ['args', s.args],
      ['kwargs', s.kwargs],
    ] as const) {
      if (v === undefined) continue;
      const mineV = key === 'args' ? o.args : o.kwargs;
      if (!known(v) || !equal(v.value, mineV)) {
        diffs.push(out(`${key}: Smarter ${describe(v)}; here ${show(mineV)}`));
      }
    }
  }
  for (const o of ours) {
    if (!theirs.has(o.name)) {
      diffs.push({
        group: 'Beat entry',
        subject: o.name,
        message: `smarter-beat sends it (${o.task}); Smarter's schedule has no such entry`,
      });
    }
  }
  return diffs;
}

/** Every `smarter_settings.<attr>` a task option or Beat entry reads, once, with what Smarter reads it from. */
function settingsRead(smarter: SmarterSource): Map<string, SmarterValue> {
  const found = new Map<string, SmarterValue>();
  const visit = (v: unknown) => {
    if (v && typeof v === 'object' && 'setting' in v && typeof (v as SmarterValue).setting === 'string') {
      found.set((v as SmarterValue).setting as string, v as SmarterValue);
    }
  };
  for (const t of smarter.tasks) {
    [t.queue, t.maxRetries, t.retryBackoff].forEach(visit);
  }
  for (const e of smarter.beat?.entries ?? []) Object.values(e.options).forEach(visit);
  return found;
}

export function compareSettings(smarter: SmarterSource): Difference[] {
  const diffs: Difference[] = [];
  for (const [attr, v] of settingsRead(smarter)) {
    const subject = `smarter_settings.${attr}`;
    const out = (message: string): Difference => ({ group: 'setting', subject, message });
    const key = settingKey(attr);
    if (key === undefined) {
      diffs.push(out(`a task option reads it${v.env ? ` (${v.env})` : ''}; this worker has no such setting`));
      continue;
    }
    const ours = SMARTER_SETTINGS[key];
    if (v.env === undefined) {
      diffs.push(out(`its environment variable and default cannot be found in smarter/common/conf`));
      continue;
    }
    if (!ours.env.includes(v.env)) {
      diffs.push(out(`Smarter reads ${v.env}; this worker reads ${ours.env.join(', ')}`));
    }
    if (!equal(v.value, ours.default)) {
      diffs.push(out(`default: Smarter ${show(v.value)}; here ${show(ours.default)}`));
    }
  }
  return diffs;
}

export function sortDifferences(diffs: Difference[]): Difference[] {
  return [...diffs].sort(
    (a, b) => GROUPS.indexOf(a.group) - GROUPS.indexOf(b.group) || a.subject.localeCompare(b.subject),
  );
}
