/**
 * What an operator asks a broker first, for `doctor`: each queue declared and consumed, and how much waits in
 * it; the delay topology complete and flowing (a probe countdown goes through it); the dead-letter queues and
 * why their messages are there; on Redis, unacked messages past the visibility timeout and the delayed set's
 * earliest due time. Each problem is one line that says what to do. Read-only but for the probe, which goes to
 * a queue of its own.
 */
import { randomUUID } from 'node:crypto';
import type { Broker } from '../broker/broker.js';
import { sendLater } from '../broker/delayed.js';
import { listDeadLetters } from '../deadletter/tools.js';

export type Severity = 'ok' | 'warn' | 'fail';

export interface Finding {
  severity: Severity;
  /** What was checked: `broker`, `queue <name>`, `delay topology`, … */
  subject: string;
  /** What was found; for a problem, what to do. */
  text: string;
}

export const ok = (subject: string, text: string): Finding => ({ severity: 'ok', subject, text });
export const warn = (subject: string, text: string): Finding => ({ severity: 'warn', subject, text });
export const fail = (subject: string, text: string): Finding => ({ severity: 'fail', subject, text });

export const DOCTOR_PROBE_QUEUE = 'celery_doctor_probe';

export interface BrokerCheckOptions {
  queues: readonly string[];
  deadLetterSuffix: string;
  /** Whether the workers use the broker's delay store (delayed delivery on). */
  delayed: boolean;
  /** How long past its 1 s a probe countdown may take before the topology is said not to flow. */
  probeMarginMs?: number;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

export async function queueChecks(broker: Broker, o: BrokerCheckOptions): Promise<Finding[]> {
  const out: Finding[] = [];
  for (const q of o.queues) {
    const s = await broker.inspectQueue(q);
    const subject = `queue ${q}`;
    if (!s) {
      out.push(
        fail(
          subject,
          `not declared: start a worker consuming it (smarter-worker -Q ${q}), which declares it, or correct the queue name`,
        ),
      );
      continue;
    }
    // AMQP 0-9-1 tells ready messages and consumers only; unacked counts and ages need the management API.
    const counts = `${plural(s.messageCount, 'ready message')}, ${plural(s.consumerCount, 'consumer')}`;
    if (s.consumerCount === 0) {
      out.push(
        fail(
          subject,
          `${counts}: no worker consumes it; start one (smarter-worker -Q ${q}) or check why its workers are not ready (/readyz)`,
        ),
      );
    } else out.push(ok(subject, counts));
  }
  return out;
}

export async function deadLetterChecks(broker: Broker, o: BrokerCheckOptions): Promise<Finding[]> {
  const out: Finding[] = [];
  for (const q of o.queues) {
    const dlq = q + o.deadLetterSuffix;
    const s = await broker.inspectQueue(dlq);
    if (!s || s.messageCount === 0) {
      out.push(ok(`dead letters ${dlq}`, 'empty'));
      continue;
    }
    const summary = await listDeadLetters(broker, dlq);
    const reasons = [...summary.byReason]
      .sort((a, b) => b[1] - a[1])
      .map(([r, n]) => `${n} × ${r.length > 80 ? `${r.slice(0, 77)}…` : r}`);
    out.push(
      warn(
        `dead letters ${dlq}`,
        `${plural(s.messageCount, 'message')} (${reasons.join('; ')}): read them with \`smarter-worker dead-letter list ${q}\`, fix the cause, then \`smarter-worker dead-letter replay ${q}\``,
      ),
    );
  }
  return out;
}

/** AMQP: every level queue and the sink exist. Any broker: a 1 s countdown to a queue of the doctor's own arrives in time. */
export async function delayChecks(broker: Broker, o: BrokerCheckOptions): Promise<Finding[]> {
  if (!o.delayed || !broker.capabilities.nativeDelay) {
    return [ok('delay topology', 'not used (delayed delivery off, or a broker without one)')];
  }
  const out: Finding[] = [];
  const levels = await broker.delayedStats();
  // Each level is a queue of its own on AMQP (on Redis all are one sorted set, which exists once used).
  if (new Set(levels.map((l) => l.queue)).size > 1) {
    const missing: string[] = [];
    for (const l of levels) if (!(await broker.inspectQueue(l.queue))) missing.push(l.queue);
    if (missing.length > 0) {
      out.push(
        fail(
          'delay topology',
          `missing ${missing.join(', ')}: start a worker (it declares the topology at every connection); countdowns sent meanwhile were refused`,
        ),
      );
      return out;
    }
  }
  const backlog = broker.backlog ? await broker.backlog() : null;
  if (backlog) {
    const overdue = backlog.earliestDueAt !== null ? Date.now() - backlog.earliestDueAt : 0;
    const what = `${plural(backlog.delayed, 'delayed message')}${backlog.earliestDueAt !== null ? `, earliest due ${new Date(backlog.earliestDueAt).toISOString()}` : ''}`;
    if (overdue > 60_000) {
      out.push(
        fail(
          'delayed set',
          `${what}, ${seconds(overdue)} overdue: no worker of this build is moving due messages; start one (only smarter-worker moves them)`,
        ),
      );
    } else out.push(ok('delayed set', what));
  } else {
    const total = levels.reduce((n, l) => n + l.messages, 0);
    out.push(ok('delay topology', `${levels.length} levels declared; ${plural(total, 'countdown')} waiting`));
  }
  out.push(await probe(broker, o.probeMarginMs ?? 10_000));
  return out;
}

/** A 1 s countdown through the delay store to the doctor's own queue: bound and flowing when it arrives in time. */
async function probe(broker: Broker, marginMs: number): Promise<Finding> {
  const id = randomUUID();
  // A queue is bound to the delay store only when declared after it (the existing topology is left as it is).
  await broker.declareDelayed();
  await broker.declareQueue({ name: DOCTOR_PROBE_QUEUE });
  const t0 = Date.now();
  let arrived: (ms: number) => void = () => undefined;
  const got = new Promise<number>((r) => (arrived = r));
  await broker.consume(
    DOCTOR_PROBE_QUEUE,
    (d) => {
      if (d.raw.body.toString('utf8') === id) arrived(Date.now() - t0);
    },
    { noAck: true },
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    const minDelay = Math.max(1000, broker.capabilities.delayResolutionMs);
    await sendLater(
      broker,
      DOCTOR_PROBE_QUEUE,
      {
        body: Buffer.from(id),
        properties: { contentType: 'text/plain', contentEncoding: 'utf-8', headers: {}, deliveryMode: 1, priority: 0 },
      },
      minDelay,
    );
    const ms = await Promise.race([
      got,
      new Promise<null>((r) => (timer = setTimeout(() => r(null), minDelay + marginMs))),
    ]);
    if (ms === null) {
      return fail(
        'delay probe',
        `a ${seconds(minDelay)} countdown did not arrive within ${seconds(minDelay + marginMs)}: a delay level is stalled (docs/runbook.md, "Healing a stalled delay level") or, on Redis, no worker moves due messages`,
      );
    }
    return ok('delay probe', `a ${seconds(minDelay)} countdown arrived after ${ms} ms`);
  } finally {
    clearTimeout(timer);
    await broker.cancel(DOCTOR_PROBE_QUEUE).catch(() => undefined);
  }
}

export async function redisUnackedChecks(broker: Broker): Promise<Finding[]> {
  if (!broker.backlog) return [];
  const b = await broker.backlog();
  const oldest =
    b.oldestUnackedAgeMs === null ? 'none unacked' : `oldest delivered ${seconds(b.oldestUnackedAgeMs)} ago`;
  if (b.unackedOverdue > 0) {
    return [
      fail(
        'unacked',
        `${plural(b.unackedOverdue, 'message')} unacked for longer than the visibility timeout (${b.visibilityTimeoutSeconds} s), ${oldest}: their worker died; a running worker restores them within a quarter of the timeout, so start one if none runs`,
      ),
    ];
  }
  return [ok('unacked', `none past the visibility timeout (${b.visibilityTimeoutSeconds} s); ${oldest}`)];
}

/** `p`, or a rejection saying nothing came within `ms`. */
export async function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>(
        (_r, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms)),
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** One line per finding; problems say what to do. */
export function formatFindings(findings: readonly Finding[]): string {
  const tag = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' } as const;
  return findings.map((f) => `${tag[f.severity]}  ${f.subject}: ${f.text}`).join('\n');
}

/** 1 when any finding failed, else 0 (warnings are for the operator to judge). */
export const exitCodeOf = (findings: readonly Finding[]) => (findings.some((f) => f.severity === 'fail') ? 1 : 0);
