/** What Smarter's tasks are given at start-up, and the options every operational task shares. */
import * as z from 'zod';
import type { RetryPolicy } from '../lib/registry/define-task.js';
import type { CloudDeps } from './cloud/ports.js';
import type { Database } from './db/database.js';

export interface SmarterDeps {
  db: Database;
  /** Route 53, ACM, Kubernetes, DNS and SMTP, each built on first use (`tasks/cloud/index.ts`). */
  cloud: CloudDeps;
}

export interface TaskEnv {
  operationalQueue: string;
  infrastructureQueue: string;
  /** Smarter's `autoretry_for=(Exception,), retry_backoff=…, max_retries=…` (the `@app.task` decorators under Smarter's `smarter/smarter/apps/<app>/tasks`). */
  autoretry: RetryPolicy;
}

/** Django's key of the chat session in request data (`SMARTER_CHAT_SESSION_KEY_NAME`). */
export const SESSION_KEY_NAME = 'session_key';

/** A primary key as Python callers send it: an int, or its digits (Django's `get(id=…)` takes both). */
export const pk = () =>
  z
    .union([z.number().int().positive(), z.string().regex(/^\d+$/, 'expected an integer id')])
    .transform((v) => Number(v));
