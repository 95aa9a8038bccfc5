/**
 * The scale benchmark's goals, checked against the medians of one run (pure): the drain within 10% of the bare
 * consumer at every backlog, ≥5× Python on RabbitMQ and ≥8× on Redis at 100k, the worker's RSS at the largest
 * backlog within 10% of its RSS at the smallest, start-up with the largest backlog ≤1.5× the bare consumer's.
 */
import type { Sample } from './record.js';
import { median, ratio } from './stats.js';

export interface Goal {
  goal: string;
  measured: string;
  /** Undefined when the run did not measure what the goal needs. */
  met: boolean | undefined;
}

export const OURS = 'smarter-worker';
export const BARE = 'bare consumer';
const BROKERS = [
  ['scale-rabbitmq', 'RabbitMQ', 5],
  ['scale-redis', 'Redis', 8],
] as const;
/** The backlog the ×Python goals are set at; a run without it is checked at its largest backlog Python drained. */
const PYTHON_AT = 100_000;

const med = (samples: Sample[], bench: string, system: string, metric: string, x?: number) =>
  median(
    samples
      .filter((s) => s.bench === bench && s.system === system && s.metric === metric && (x === undefined || s.x === x))
      .map((s) => s.value),
  );
const xsOf = (samples: Sample[], bench: string, system: string, metric: string) =>
  [
    ...new Set(
      samples.filter((s) => s.bench === bench && s.system === system && s.metric === metric).flatMap((s) => s.x ?? []),
    ),
  ].sort((a, b) => a - b);
const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');
const judge = (r: number, ok: (r: number) => boolean) => (Number.isFinite(r) ? ok(r) : undefined);

export function scaleGoals(samples: readonly Sample[]): Goal[] {
  const all = [...samples];
  const goals: Goal[] = [];
  for (const [bench, broker, timesPython] of BROKERS) {
    for (const x of xsOf(all, bench, OURS, 'tasks/s')) {
      const r = ratio(med(all, bench, OURS, 'tasks/s', x), med(all, bench, BARE, 'tasks/s', x));
      goals.push({
        goal: `${broker} ${x}: drain rate ≥ 0.9 × the bare consumer's`,
        measured: `${fmt(r)} ×`,
        met: judge(r, (v) => v >= 0.9),
      });
    }
    const python = all.find((s) => s.bench === bench && s.system.startsWith('python'))?.system;
    const pyXs = python ? xsOf(all, bench, python, 'tasks/s') : [];
    const at = pyXs.includes(PYTHON_AT) ? PYTHON_AT : pyXs.at(-1);
    const r =
      python && at !== undefined
        ? ratio(med(all, bench, OURS, 'tasks/s', at), med(all, bench, python, 'tasks/s', at))
        : NaN;
    goals.push({
      goal: `${broker} ${at ?? PYTHON_AT}: drain rate ≥ ${timesPython} × Python's`,
      measured: `${fmt(r)} ×`,
      met: judge(r, (v) => v >= timesPython),
    });
    const xs = xsOf(all, bench, OURS, 'peak RSS');
    const [small, large] = [xs[0], xs.at(-1)];
    for (const metric of ['peak RSS', 'settled RSS']) {
      const g =
        small !== undefined && large !== undefined && large > small
          ? ratio(med(all, bench, OURS, metric, large), med(all, bench, OURS, metric, small))
          : NaN;
      goals.push({
        goal: `${broker}: ${metric} at ${large ?? '?'} ≤ 1.1 × at ${small ?? '?'}`,
        measured: `${fmt(g)} ×`,
        met: judge(g, (v) => v <= 1.1),
      });
    }
  }
  const start = ratio(
    med(all, 'scale-startup', OURS, 'start → first task'),
    med(all, 'scale-startup', BARE, 'start → first task'),
  );
  goals.push({
    goal: 'start → first task (without mingle) ≤ 1.5 × the bare consumer',
    measured: `${fmt(start)} ×`,
    met: judge(start, (v) => v <= 1.5),
  });
  return goals;
}

export function goalsTable(goals: readonly Goal[]): string {
  const mark = (m: boolean | undefined) => (m === undefined ? 'not measured' : m ? 'met' : '**not met**');
  return [
    '| goal | measured (medians) | |',
    '|---|---:|---|',
    ...goals.map((g) => `| ${g.goal} | ${g.measured} | ${mark(g.met)} |`),
  ].join('\n');
}
