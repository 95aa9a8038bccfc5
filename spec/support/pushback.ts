/**
 * The load of the "broker pushes back" fault tests, and its accounting: tasks that publish nothing
 * (`push.work`), countdowns of them (parked in the broker's delay store: a publish), and failing tasks
 * (`push.fail`: retried 3 times with a countdown, then dead-lettered: each retry and the copy is a publish).
 * Every run is counted in Redis by task id (and retry count), so a test tells what ran twice and what never ran.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import http from 'node:http';
import type { Options } from 'amqplib';
import * as z from 'zod';
import { PythonException } from '../../lib/errors.js';
import { defineTask } from '../../lib/registry/define-task.js';
import { type Harness, startWorker } from './harness.js';
import { type LogLine, recordingLogger } from './logs.js';
import { runCounter } from './test-tasks.js';
import { waitFor } from './wait.js';

export const FAIL_RETRIES = 3;

export function pushbackTasks(queue: string, opts: { acksLate?: boolean } = {}) {
  return [
    defineTask({
      name: 'push.work',
      queue,
      ...(opts.acksLate ? { acksLate: true } : {}),
      params: z.object({ key: z.string(), ms: z.number().default(0) }),
      run: async ({ key, ms }, ctx) => {
        if (ms > 0) await sleep(ms);
        await runCounter().hincrby(`${key}:done`, ctx.id, 1);
        await runCounter().rpush(`${key}:at`, Date.now());
        return 'done';
      },
    }),
    defineTask({
      name: 'push.fail',
      queue,
      ...(opts.acksLate ? { acksLate: true } : {}),
      params: z.object({ key: z.string() }),
      retry: { autoretryFor: 'all', maxRetries: FAIL_RETRIES, defaultRetryDelay: 1 },
      deadLetterOnExhaustion: true,
      run: async ({ key }, ctx) => {
        await runCounter().hincrby(`${key}:fail`, `${ctx.id}:${ctx.retries}`, 1);
        throw new PythonException('ValueError', 'builtins', `fails at attempt ${ctx.retries}`);
      },
    }),
  ];
}

/** A worker on `brokerUrl` running the push-back tasks, its log lines kept in `lines`; `env` adds its settings. */
export function startPushbackWorker(
  brokerUrl: string,
  lines: LogLine[],
  env: Record<string, string>,
): Promise<Harness> {
  return startWorker({
    tasks: (q) => pushbackTasks(q),
    logger: recordingLogger(lines),
    env: { CELERY_BROKER_URL: brokerUrl, ...env },
  });
}

export interface LoadMessage {
  id: string;
  kind: 'work' | 'countdown' | 'fail';
  body: Buffer;
  options: Options.Publish;
}

function message(task: string, key: string, kind: LoadMessage['kind'], eta?: Date, ms = 0): LoadMessage {
  const id = randomUUID();
  return {
    id,
    kind,
    body: Buffer.from(JSON.stringify([[], ms > 0 ? { key, ms } : { key }, {}])),
    options: {
      persistent: true,
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      correlationId: id,
      headers: { lang: 'py', task, id, root_id: id, retries: 0, eta: eta ? eta.toISOString() : null },
    },
  };
}

/** `work` quick tasks (of `workMs` each), `countdowns` due 3–8 s from now, and `fail` tasks that end dead-lettered. */
export function pushbackLoad(
  key: string,
  n: { work: number; countdowns: number; fail: number; workMs?: number },
): LoadMessage[] {
  const out: LoadMessage[] = [];
  for (let i = 0; i < n.countdowns; i++) {
    out.push(message('push.work', key, 'countdown', new Date(Date.now() + 3000 + (i % 6) * 1000)));
  }
  for (let i = 0; i < n.fail; i++) out.push(message('push.fail', key, 'fail'));
  for (let i = 0; i < n.work; i++) out.push(message('push.work', key, 'work', undefined, n.workMs ?? 0));
  return out;
}

export interface Accounting {
  sent: number;
  done: number;
  /** Tasks (or attempts of a failing task) that ran more than once. */
  ranTwice: string[];
  /** Ids dead-lettered more than once. */
  duplicatedDeadLetters: string[];
  /** Ids neither done, nor dead-lettered, nor waiting in the queue. */
  lost: string[];
}

/** Every id of the load accounted for: done once, or each attempt once and one dead-letter copy. */
export async function account(
  key: string,
  load: readonly LoadMessage[],
  deadLetterIds: readonly string[],
  queued: ReadonlySet<string> = new Set(),
): Promise<Accounting> {
  const done = await runCounter().hgetall(`${key}:done`);
  const fail = await runCounter().hgetall(`${key}:fail`);
  const dl = new Map<string, number>();
  for (const id of deadLetterIds) dl.set(id, (dl.get(id) ?? 0) + 1);
  const ranTwice = [
    ...Object.entries(done).filter(([, n]) => Number(n) > 1),
    ...Object.entries(fail).filter(([, n]) => Number(n) > 1),
  ].map(([id]) => id);
  const lost: string[] = [];
  let finished = 0;
  for (const m of load) {
    if (m.kind === 'fail') {
      const allRan = Array.from({ length: FAIL_RETRIES + 1 }, (_, r) => fail[`${m.id}:${r}`] !== undefined).every(
        Boolean,
      );
      if (dl.has(m.id) && allRan) finished++;
      else if (!queued.has(m.id)) lost.push(m.id);
    } else if (done[m.id] !== undefined) finished++;
    else if (!queued.has(m.id)) lost.push(m.id);
  }
  return {
    sent: load.length,
    done: finished,
    ranTwice,
    duplicatedDeadLetters: [...dl].filter(([, n]) => n > 1).map(([id]) => id),
    lost,
  };
}

/**
 * The accounting once the broker has stopped pushing back: dead-letter copies are drained (`drainDeadLetters`)
 * until every id is accounted for or `withinMs` has passed, then for 3 s more, in which anything sent twice would
 * have arrived. What is still lost then is the test's to judge.
 */
export async function accountWhenSettled(
  key: string,
  load: readonly LoadMessage[],
  drainDeadLetters: () => Promise<string[]>,
  withinMs: number,
): Promise<Accounting> {
  const deadLetters: string[] = [];
  await waitFor(
    async () => {
      deadLetters.push(...(await drainDeadLetters()));
      return (await account(key, load, deadLetters)).lost.length === 0;
    },
    withinMs,
    500,
  ).catch(() => undefined);
  await sleep(3000);
  deadLetters.push(...(await drainDeadLetters()));
  return account(key, load, deadLetters);
}

/** GET on the worker's HTTP endpoint: status, body and how long the answer took. */
export function probe(
  port: number,
  path: string,
  timeoutMs = 5000,
): Promise<{ status: number; body: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: Date.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error(`${path} did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}
