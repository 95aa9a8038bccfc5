/**
 * Celery's `task_annotations`, `task_default_rate_limit` and `worker_disable_rate_limits`: options laid over
 * the tasks' own when the worker starts, per task name or `*` for every task, as Celery's annotations change
 * the task classes. The tasks are copied: the definitions are module-level and shared.
 */
import { ParseError } from '../config/settings.js';
import type { AnyTask } from '../registry/define-task.js';
import { parseRate } from '../worker/rate-limit.js';

/** The options an annotation may set, as Celery names them. */
export interface Annotation {
  rate_limit?: string | null;
  time_limit?: number | null;
  soft_time_limit?: number | null;
  acks_late?: boolean;
  max_retries?: number | null;
}

export type Annotations = ReadonlyMap<string, Annotation>;

const KEYS = ['rate_limit', 'time_limit', 'soft_time_limit', 'acks_late', 'max_retries'] as const;

function annotation(name: string, v: unknown): Annotation {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ParseError(`${name}: expected an object`);
  const o = v as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !(KEYS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    throw new ParseError(`${name}: unknown key(s) ${unknown.join(', ')} (known: ${KEYS.join(', ')})`);
  }
  const out: Annotation = {};
  if (o.rate_limit !== undefined) {
    if (o.rate_limit !== null && typeof o.rate_limit !== 'string' && typeof o.rate_limit !== 'number') {
      throw new ParseError(`${name}: rate_limit must be a rate such as "10/m"`);
    }
    const rate = o.rate_limit === null ? null : String(o.rate_limit);
    if (rate !== null) {
      try {
        parseRate(rate);
      } catch (err) {
        throw new ParseError(`${name}: rate_limit ${JSON.stringify(rate)}: ${(err as Error).message}`);
      }
    }
    out.rate_limit = rate;
  }
  for (const k of ['time_limit', 'soft_time_limit'] as const) {
    const t = o[k];
    if (t === undefined) continue;
    if (t !== null && (typeof t !== 'number' || !(t > 0))) {
      throw new ParseError(`${name}: ${k} must be positive seconds or null`);
    }
    out[k] = t;
  }
  if (o.acks_late !== undefined) {
    if (typeof o.acks_late !== 'boolean') throw new ParseError(`${name}: acks_late must be true or false`);
    out.acks_late = o.acks_late;
  }
  if (o.max_retries !== undefined) {
    const m = o.max_retries;
    if (m !== null && (typeof m !== 'number' || !Number.isInteger(m) || m < 0)) {
      throw new ParseError(`${name}: max_retries must be a non-negative integer or null`);
    }
    out.max_retries = m;
  }
  return out;
}

/** `CELERY_TASK_ANNOTATIONS` as JSON: `{"task.name": {"rate_limit": "10/m"}, "*": {...}}`, or a list of such objects. */
export function parseAnnotations(text: string): Annotations {
  const t = text.trim();
  if (t === '' || /^(none|null)$/i.test(t)) return new Map();
  let v: unknown;
  try {
    v = JSON.parse(t);
  } catch {
    throw new ParseError(
      'expected JSON, e.g. {"*": {"rate_limit": "10/s"}, "smarter.apps.x.tasks.y": {"time_limit": 60}}',
    );
  }
  const maps = Array.isArray(v) ? v : [v];
  const out = new Map<string, Annotation>();
  for (const m of maps) {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) {
      throw new ParseError('expected an object of task names');
    }
    for (const [name, a] of Object.entries(m as Record<string, unknown>)) {
      // Celery's list form: the first mapping that names a task wins.
      if (!out.has(name)) out.set(name, annotation(name, a));
    }
  }
  return out;
}

export interface TaskOverlay {
  annotations: Annotations;
  defaultRateLimit: string | null;
  disableRateLimits: boolean;
}

function apply<D>(task: AnyTask<D>, a: Annotation): AnyTask<D> {
  const t: AnyTask<D> = { ...task };
  if (a.rate_limit !== undefined) t.rateLimit = a.rate_limit ?? undefined;
  if (a.time_limit !== undefined) t.timeLimit = a.time_limit ?? undefined;
  if (a.soft_time_limit !== undefined) t.softTimeLimit = a.soft_time_limit ?? undefined;
  if (a.acks_late !== undefined) t.acksLate = a.acks_late;
  if (a.max_retries !== undefined) t.retry = { ...(task.retry ?? {}), maxRetries: a.max_retries };
  return t;
}

/** The task with the overlay applied: the task's own name wins over `*`, both over the task's definition. */
export function overlayTask<D>(task: AnyTask<D>, o: TaskOverlay): AnyTask<D> {
  let t = task;
  if (o.defaultRateLimit !== null && t.rateLimit === undefined) t = { ...t, rateLimit: o.defaultRateLimit };
  const all = o.annotations.get('*');
  if (all) t = apply(t, all);
  const own = o.annotations.get(task.name);
  if (own) t = apply(t, own);
  if (o.disableRateLimits && t.rateLimit !== undefined) t = { ...t, rateLimit: undefined };
  return t;
}

export function overlayTasks<D>(tasks: ReadonlyArray<AnyTask<D>>, o: TaskOverlay): Array<AnyTask<D>> {
  return tasks.map((task) => overlayTask(task, o));
}
