/**
 * A rolling update between Python Beat with RedBeat and smarter-beat on one Redis, in processes: a RedBeat
 * stand-in (spec/support/redbeat_standin.py: redis-py's Lock with RedBeat's extend script, Celery's schedules)
 * sends 1-second entries; two smarter-beat replicas start beside it; RedBeat is stopped; the sending replica
 * is replaced by a new one; then RedBeat comes back and every replica is stopped (a rollback). Every stop is a
 * clean SIGTERM, as Kubernetes sends. Each sender says which run of which entry it sent.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { onLines } from './child.js';
import { spawnBeat } from './beat-process.js';
import { interval, redBeatEntry } from './redbeat-fixtures.js';
import { REDIS_URL, type RedisScope, redisScope } from './redis.js';

export interface Send {
  who: string;
  entry: string;
  run: number;
  at: number;
}

export interface RollingReport {
  sends: Send[];
  /** Per entry: its final `total_run_count` in RedBeat's meta. */
  finalCounts: Record<string, number>;
  /** Messages smarter-beat published (the stand-in publishes none). */
  published: number;
  /** Longest time between two sends of one entry (a handover included). */
  maxGapMs: number;
  /** How many times the sender changed. */
  handovers: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function stopped(p: ChildProcess): Promise<void> {
  return p.exitCode !== null || p.signalCode !== null
    ? Promise.resolve()
    : new Promise((r) => p.once('exit', () => r()));
}

export async function rollingUpdate(
  scope: RedisScope,
  durationMs: number,
  entries = ['tick-a', 'tick-b', 'tick-c'],
): Promise<RollingReport> {
  const prefix = `${scope.prefix}redbeat:`;
  const queue = 'rolling';
  const sends: Send[] = [];
  const now = Date.now();
  // As RedBeat's setup_schedule left them: each static entry with a meta of its install time.
  for (const name of entries) {
    await redBeatEntry(scope.redis, prefix, {
      name,
      schedule: interval(1),
      lastRunAt: now,
      score: Math.floor(now / 1000) + 1,
      static: true,
      task: 'test.add',
      queue,
    });
  }
  const procs: ChildProcess[] = [];

  const python = (who: string): ChildProcess => {
    const p = spawn('/usr/bin/python3', ['spec/support/redbeat_standin.py', 'run', REDIS_URL, prefix, '5', '0.5'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    onLines(p.stdout, (line) => {
      const rec = JSON.parse(line) as { sent?: string; run?: number };
      if (rec.sent !== undefined && rec.run !== undefined) {
        sends.push({ who, entry: rec.sent, run: rec.run, at: Date.now() });
      }
    });
    procs.push(p);
    return p;
  };
  const smarter = (who: string): ChildProcess => {
    const env = {
      BEAT_REDBEAT_PREFIX: prefix,
      BEAT_ENTRIES: entries.join(','),
      BEAT_QUEUE: queue,
      REDIS_URL,
      BEAT_BROKER_URL: REDIS_URL,
      BEAT_KEY_PREFIX: scope.prefix,
      BEAT_LOCK_TIMEOUT_MS: '2500',
    };
    const p = spawnBeat(env, (s) => {
      if (s.entry !== undefined && s.run !== undefined) sends.push({ who, entry: s.entry, run: s.run, at: s.at });
    });
    procs.push(p);
    return p;
  };
  const senderNow = (): string | undefined => sends.at(-1)?.who;
  const stop = async (p: ChildProcess) => {
    p.kill('SIGTERM');
    await stopped(p);
  };

  try {
    const py1 = python('redbeat-1');
    await sleep(durationMs * 0.1);
    const reps = new Map<string, ChildProcess>([
      ['smarter-a', smarter('smarter-a')],
      ['smarter-b', smarter('smarter-b')],
    ]);
    await sleep(durationMs * 0.15);
    await stop(py1);
    await sleep(durationMs * 0.2);
    // The new deployment rolls: the sending replica is replaced.
    const holder = senderNow();
    const h = holder ? reps.get(holder) : undefined;
    if (h) {
      await stop(h);
      reps.delete(holder ?? '');
    }
    reps.set('smarter-c', smarter('smarter-c'));
    await sleep(durationMs * 0.2);
    // Rollback: RedBeat comes back, every smarter-beat replica goes, the sender first.
    const py2 = python('redbeat-2');
    await sleep(durationMs * 0.1);
    const first = reps.get(senderNow() ?? '');
    if (first) await stop(first);
    await sleep(durationMs * 0.05);
    for (const p of reps.values()) await stop(p);
    await sleep(durationMs * 0.2);
    await stop(py2);
  } finally {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await Promise.all(procs.map(stopped));
  }

  const finalCounts: Record<string, number> = {};
  for (const name of entries) {
    const meta = await scope.redis.hget(`${prefix}${name}`, 'meta');
    finalCounts[name] = (JSON.parse(meta ?? '{}') as { total_run_count?: number }).total_run_count ?? 0;
  }
  let maxGapMs = 0;
  for (const name of entries) {
    const at = sends.filter((s) => s.entry === name).map((s) => s.at);
    for (let i = 1; i < at.length; i += 1) maxGapMs = Math.max(maxGapMs, (at[i] ?? 0) - (at[i - 1] ?? 0));
  }
  let handovers = 0;
  for (let i = 1; i < sends.length; i += 1) if (sends[i]?.who !== sends[i - 1]?.who) handovers += 1;
  const published = await scope.redis.llen(`${scope.prefix}${queue}`);
  return { sends, finalCounts, published, maxGapMs, handovers };
}

/** Per entry, the runs sent more than once and the runs never sent (1 … final count). */
export function runsCheck(r: RollingReport): { duplicates: string[]; missing: string[] } {
  const duplicates: string[] = [];
  const missing: string[] = [];
  for (const [name, total] of Object.entries(r.finalCounts)) {
    const runs = r.sends.filter((s) => s.entry === name).map((s) => s.run);
    const seen = new Set<number>();
    for (const n of runs) {
      if (seen.has(n)) duplicates.push(`${name}#${n}`);
      seen.add(n);
    }
    for (let n = 1; n <= total; n += 1) if (!seen.has(n)) missing.push(`${name}#${n}`);
  }
  return { duplicates, missing };
}

export function describeRolling(r: RollingReport): string {
  const by = new Map<string, number>();
  for (const s of r.sends) by.set(s.who, (by.get(s.who) ?? 0) + 1);
  return `${r.sends.length} sends (${[...by].map(([w, n]) => `${w} ${n}`).join(', ')}), final run counts ${JSON.stringify(r.finalCounts)}, ${r.published} published by smarter-beat, ${r.handovers} handovers, longest gap ${r.maxGapMs} ms`;
}

/**
 * A rolling update of `durationMs` on a key prefix of its own, checked as every such run must be: each run sent
 * exactly once, by at least three processes in turn, no entry unsent for 5 s, and at least `minRuns` runs per entry.
 */
export async function expectRollingExactlyOnce(label: string, durationMs: number, minRuns: number): Promise<void> {
  const scope = redisScope();
  try {
    const r = await rollingUpdate(scope, durationMs);
    process.stdout.write(`redbeat rolling ${label}: ${describeRolling(r)}\n`);
    expect(runsCheck(r)).toEqual({ duplicates: [], missing: [] });
    expect(r.sends.length).toBe(Object.values(r.finalCounts).reduce((a, b) => a + b, 0));
    expect(r.published).toBe(r.sends.filter((s) => s.who.startsWith('smarter')).length);
    // Every process sent in its turn, and no handover left an entry unsent longer than a few seconds.
    expect(new Set(r.sends.map((s) => s.who)).size).toBeGreaterThanOrEqual(3);
    expect(r.maxGapMs).toBeLessThan(5000);
    // One run per second and entry, give or take the handovers.
    for (const n of Object.values(r.finalCounts)) expect(n).toBeGreaterThan(minRuns);
  } finally {
    await scope.close();
  }
}
