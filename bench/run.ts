/**
 * `npm run bench [-- --quick] [--reps N] [--only a,b]`: runs every benchmark of bench/ N times (each run
 * alternates the systems it compares, so repetitions interleave them), then writes
 * bench/results/<date>-<host>.md and its SVG plots. `--scale [--sizes 10000,100000,1000000] [--park N]`
 * runs the scale benchmarks instead (minutes to hours, brokers of their own, not in CI) into
 * bench/results/<date>-<host>-scale.md, with their goals checked. With `--only`, the report of that date and host keeps
 * every section (and plot) of the benchmarks it did not run, and gains a note saying what this run was; `--date D`
 * names the report of another day to merge into (its date stays D).
 * Numbers are never asserted: a benchmark fails this command only by crashing.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeMachine } from './machine.js';
import { isolationSpec, latencySpec, renderSvg, scaleSpec, throughputSpec } from './plots.js';
import { readSamples } from './record.js';
import { type BenchInfo, mediansOfReport, mergeReport, renderReport } from './report.js';
import { SCALE_BENCHES, scaleSteps } from './scale-steps.js';
import { goalsTable, scaleGoals } from './scale-goals.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const scale = argv.includes('--scale');
const flag = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const reps = Number(flag('--reps') ?? (quick ? 1 : 3));
const only = flag('--only')?.split(',');

interface Step {
  bench: string;
  file: string;
  args: string[];
  env?: Record<string, string>;
}
// A smoke run waits 1 s, not 5, for the storm's first round, and samples the broker once during the storm, not 4 times.
const QUICK_ISO = { BENCH_ISO_SETTLE_MS: '1000', BENCH_ISO_SAMPLES: '1' };
const steps: Step[] = scale
  ? scaleSteps(flag('--sizes'), flag('--park'))
  : quick
    ? [
        // A smoke run: every benchmark and code path once, at the smallest sizes that still exercise them.
        { bench: 'accumulate', file: 'accumulate', args: ['500', '4'] },
        { bench: 'startup', file: 'startup', args: ['2'] },
        { bench: 'latency', file: 'latency', args: ['100', '2'] },
        // The checks' burst and their staggered start once each: the staggered one under the CPU limits (where
        // cgroups are writable, as in CI; elsewhere isolation-limits says it skipped).
        { bench: 'isolation', file: 'isolation', args: ['100', '2', '100'], env: QUICK_ISO },
        { bench: 'isolation', file: 'isolation-limits', args: ['100', '2', '200', '60'], env: QUICK_ISO },
        { bench: 'memory', file: 'memory', args: ['1000,2000', '2000'] },
        { bench: 'charges', file: 'charges', args: ['200', '100', '2'] },
        // Quorum delay levels and Python's held countdowns: classic levels differ from quorum by one setting only.
        { bench: 'broker-cpu', file: 'broker-cpu', args: ['100', '2', '1', 'quorum,python'] },
        { bench: 'tracing', file: 'tracing', args: ['500', '2'] },
        // pushback is left out: its RabbitMQ node, Python worker and countdowns take ~40 s even at 600 tasks, and
        // the fault suite runs the same alarm (spec/faults/rabbit-alarm.test.ts).
      ]
    : [
        { bench: 'accumulate', file: 'accumulate', args: ['20000', '4'] },
        { bench: 'startup', file: 'startup', args: ['5'] },
        { bench: 'latency', file: 'latency', args: ['100,1000', '10'] },
        { bench: 'isolation', file: 'isolation', args: ['200', '15', '100'] },
        { bench: 'isolation', file: 'isolation', args: ['200', '15', '2000'] },
        { bench: 'isolation', file: 'isolation', args: ['200', '15', '2000', '60'] },
        { bench: 'isolation', file: 'isolation-limits', args: ['200', '15', '2000'] },
        { bench: 'isolation', file: 'isolation-limits', args: ['200', '15', '2000', '60'] },
        { bench: 'memory', file: 'memory', args: ['10000,100000', '100000', '2'] },
        { bench: 'charges', file: 'charges', args: ['10000', '200', '15'] },
        { bench: 'broker-cpu', file: 'broker-cpu', args: ['500', '30', '3'] },
        { bench: 'tracing', file: 'tracing', args: ['10000', '5'] },
        { bench: 'pushback', file: 'pushback', args: ['30000', '20'] },
      ];

const benches: Record<string, BenchInfo> = scale
  ? SCALE_BENCHES
  : {
      accumulate: {
        title: 'Throughput: drain N celery.accumulate (Python Celery producer, late ack)',
        baseline: 'bare amqplib',
      },
      startup: { title: 'Start-up: process start → consuming an empty queue', baseline: 'node + amqplib' },
      latency: {
        title: 'Latency: publish → task start and publish → result, per rate (tasks/s)',
        baseline: 'python-celery',
      },
      isolation: {
        title: 'Isolation (ADR-030): operational latency per number of checks waiting (0 = idle)',
        baseline: 'python-celery',
        note: 'Checks reschedule together every 3 s (the stress) unless a row says `every 60 s` (staggered: 2,000 deployments at Smarter’s certificate interval, 33 reschedules/s). `ops` is publish → result, both systems; `storm / idle` is the ratio of the two p99s in one run. `worker wait` (ours only) is delivery → task start inside the operational worker, beside its event-loop delay and its longest GC pause.',
      },
      memory: {
        title: 'Memory: the infrastructure worker’s RSS per checks waiting, and after a churn',
        baseline: 'smarter-worker',
        note: 'One system: compare the rows with each other (no growth wanted between the last two).',
      },
      charges: {
        title: 'create_charge end to end (publish → row in MariaDB), latency @ rate',
        baseline: 'python-celery -c 4',
      },
      'broker-cpu': {
        title: 'Broker cost: RabbitMQ CPU seconds per 1,000 check reschedules (a node of its own per system)',
        baseline: 'smarter-worker, quorum delay levels',
      },
      tracing: {
        title: 'Tracing: off (default) against on (always_on, OTLP/HTTP to a sink), start-up and throughput',
        baseline: 'tracing off',
        note: 'Start-up is process start → consuming an empty queue; throughput drains N celery.accumulate (late ack, results ignored).',
      },
      pushback: {
        title: 'Push-back: quick tasks through a RabbitMQ memory alarm, and Redis early-ack throughput',
        baseline: 'python-celery -c 2',
        note: 'N quick tasks (every 50th with a countdown) wait on a RabbitMQ node of their own; once a third is done, a memory alarm blocks every connection that publishes for 20 s (not in --quick). Ours (Smarter’s defaults, early ack) parks the countdowns in the broker, a publish: those taken in during the alarm wait, acked, in its publish hold until it ends; Python holds them in memory. `not done when the alarm rose` is what it could slow (rabbitmqctl takes a second or two); the rate is over the part of the alarm that still had tasks. Then the same quick tasks, without countdowns, on a redis-server of their own (early ack): the rate from first to last finish.',
      },
    };

const host = os.hostname();
// `--date D`: an `--only` run of today goes into the report of day D (of this host), beside that run's figures.
const today = new Date().toISOString().slice(0, 10);
const date = flag('--date') ?? today;
if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new Error(`--date ${date}: expected YYYY-MM-DD`);
const dir = 'bench/results';
fs.mkdirSync(dir, { recursive: true });
const out = path.join(os.tmpdir(), `bench-${process.pid}.jsonl`);
fs.rmSync(out, { force: true });
const began = performance.now();
const crashed: string[] = [];

for (let rep = 1; rep <= reps; rep++) {
  for (const step of steps.filter((s) => !only || only.includes(s.bench))) {
    process.stderr.write(`\n== ${step.bench} ${step.args.join(' ')} (repetition ${rep} of ${reps})\n`);
    const child = spawn(process.execPath, [`dist/bench/${step.file}.js`, ...step.args], {
      env: { ...process.env, ...step.env, BENCH_OUT: out, BENCH_REPETITION: String(rep - 1) },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0) crashed.push(`${step.bench} (repetition ${rep}) exited with ${code}`);
  }
}

const samples = readSamples(out);
const base = `${date}-${host}${scale ? '-scale' : ''}`;
const reportFile = path.join(dir, `${base}.md`);
// With --only, the plots and the goals of a scale report also read the medians of the benchmarks not run now.
const earlier =
  scale && only && fs.existsSync(reportFile)
    ? mediansOfReport(
        fs.readFileSync(reportFile, 'utf8'),
        Object.fromEntries(
          Object.entries(benches)
            .filter(([id]) => !only.includes(id))
            .map(([id, b]) => [id, b.title]),
        ),
      )
    : [];
const summarized = [...earlier, ...samples];
const drains = summarized.filter((s) => s.bench === 'scale-rabbitmq' || s.bench === 'scale-redis');
const plots: [string, string, ReturnType<typeof throughputSpec>][] = scale
  ? [
      [
        `${base}-rate.svg`,
        'scale-rabbitmq',
        scaleSpec(drains, ['tasks/s'], 'Drain rate vs backlog (median tasks/s)', 'tasks/s'),
      ],
      [
        `${base}-rss.svg`,
        'scale-rabbitmq',
        scaleSpec(drains, ['peak RSS', 'settled RSS'], 'Worker RSS vs backlog (median MB)', 'MB'),
      ],
    ]
  : [
      [`${base}-throughput.svg`, 'accumulate', throughputSpec(samples.filter((s) => s.bench === 'accumulate'))],
      [
        `${base}-latency.svg`,
        'latency',
        latencySpec(samples.filter((s) => s.bench === 'latency' && s.metric !== 'lost')),
      ],
      [`${base}-isolation.svg`, 'isolation', isolationSpec(samples.filter((s) => s.bench === 'isolation'))],
    ];
// With --only, a plot of a benchmark not run is left as the earlier run drew it (a scale plot is drawn again
// from the medians of both runs).
let drawn = 0;
for (const [file, bench, spec] of plots) {
  if (!scale && only && !only.includes(bench) && fs.existsSync(path.join(dir, file))) continue;
  fs.writeFileSync(path.join(dir, file), await renderSvg(spec));
  drawn++;
}
const minutes = ((performance.now() - began) / 60_000).toFixed(1);
const mode = scale
  ? `The scale benchmarks, ${reps} repetitions, ${minutes} min`
  : quick
    ? `A noisy --quick run (small counts, one repetition, ${minutes} min): it shows the harness, not the worker's performance`
    : `${reps} repetitions, ${minutes} min`;
const report = renderReport({
  date,
  host,
  machine: await describeMachine(),
  note: `${only ? `\`--only ${only.join(',')}\`: ` : ''}${mode}${date !== today ? `, run on ${today}` : ''}. Numbers from a machine that other work shares are indicative only.${crashed.length ? ` Crashed: ${crashed.join('; ')}.` : ''}`,
  benches,
  samples,
  plots: plots.map(([file]) => file),
  ...(scale ? { extra: [{ title: 'Goals', body: goalsTable(scaleGoals(summarized)) }] } : {}),
});
const ran = [
  ...Object.entries(benches).flatMap(([id, info]) => (only?.includes(id) ? [info.title] : [])),
  ...(scale ? ['Goals'] : []),
];
fs.writeFileSync(
  reportFile,
  only && fs.existsSync(reportFile) ? mergeReport(fs.readFileSync(reportFile, 'utf8'), report, ran) : report,
);
fs.rmSync(out, { force: true });
process.stderr.write(`\nwrote ${dir}/${base}.md and ${drawn} plots in ${minutes} min\n`);
if (crashed.length) {
  process.stderr.write(`crashed: ${crashed.join('; ')}\n`);
  process.exit(1);
}
