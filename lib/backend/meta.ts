/**
 * Celery's result meta and exception encoding (celery/backends/base.py), so that `AsyncResult.get()` in
 * Python returns the value, or re-raises an exception of the stored class with the stored args.
 */
import { coerceError, pyIdentityOf } from '../errors.js';
import { isoformatUtc } from '../protocol/values.js';

export type TaskState = 'PENDING' | 'STARTED' | 'RETRY' | 'SUCCESS' | 'FAILURE' | 'REVOKED';
export const READY_STATES: ReadonlySet<TaskState> = new Set(['SUCCESS', 'FAILURE', 'REVOKED']);

export interface ExceptionInfo {
  exc_type: string;
  exc_message: unknown[];
  exc_module: string | null;
}

/** A child task sent by this one, as Celery's result tuple `[[id, parent], null]`. */
export type ChildTuple = [[string, null], null];

export function childTuple(id: string): ChildTuple {
  return [[id, null], null];
}

export function exceptionInfo(thrown: unknown): ExceptionInfo {
  const id = pyIdentityOf(coerceError(thrown));
  return { exc_type: id.pyType, exc_message: [...id.pyArgs], exc_module: id.pyModule };
}

/** A Python-style traceback text built from the JS stack, ending in the line Python would print. */
export function tracebackOf(thrown: unknown): string {
  const err = coerceError(thrown);
  const info = exceptionInfo(err);
  const frames = (err.stack ?? '')
    .split('\n')
    .filter((l) => l.trim().startsWith('at '))
    .map((l) => `  ${l.trim()}`);
  return `Traceback (most recent call last):\n${frames.join('\n')}\n${info.exc_type}: ${err.message}\n`;
}

export interface StoredResult {
  taskId: string;
  state: TaskState;
  /** Already JSON-ready: a value, an ExceptionInfo, or the STARTED `{pid, hostname}`. */
  result: unknown;
  traceback: string | null;
  children: ChildTuple[] | null;
  groupId?: string | null;
  parentId?: string | null;
  /** Celery `result_extended` fields. */
  extended?: {
    name: string;
    args: unknown[];
    kwargs: Record<string, unknown>;
    worker: string;
    retries: number;
    queue: string;
    /** Celery 5.3+: the stamps' names, then each stamp under its own name. */
    stamped_headers?: string[];
    [stamp: string]: unknown;
  };
}

/** The key/value meta (`_get_result_meta`), key order as Python writes it. */
export function kvMeta(r: StoredResult, nowMs: number = Date.now()): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    status: r.state,
    result: r.result,
    traceback: r.traceback,
    children: r.children,
    date_done: READY_STATES.has(r.state) ? isoformatUtc(nowMs) : null,
  };
  if (r.groupId) meta.group_id = r.groupId;
  if (r.parentId) meta.parent_id = r.parentId;
  if (r.extended) Object.assign(meta, r.extended);
  meta.task_id = r.taskId;
  return meta;
}

/** The rpc:// body of released Celery 5.5/5.6: smaller than the KV meta, no date_done. */
export function rpcBody(r: StoredResult): Record<string, unknown> {
  return { task_id: r.taskId, status: r.state, result: r.result, traceback: r.traceback, children: r.children };
}
