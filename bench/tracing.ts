/**
 * What tracing costs: smarter-worker with tracing off (the default: the OpenTelemetry SDK is never loaded) and
 * on (every run sampled, `OTEL_TRACES_SAMPLER=always_on`, spans exported over OTLP/HTTP protobuf to a sink in
 * this process that answers 200 and keeps nothing), alternated: process start → consuming an empty queue, and
 * the drain of N celery.accumulate published by Python Celery (late ack, results ignored).
 *
 *   npm run build && node dist/bench/tracing.js [count=5000] [startRounds=3]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { record, type Sample } from './record.js';
import { rotated, summarize } from './stats.js';
import {
  AMQP_URL,
  REPETITION,
  type Row,
  deleteQueue,
  freshQueue,
  observed,
  pythonPublish,
  table,
  timeDrain,
  timeToConsuming,
  withChannel,
} from './support.js';

const count = Number(process.argv[2] ?? 5000);
const startRounds = Number(process.argv[3] ?? 3);

let spansPosted = 0;
const sink = createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    spansPosted++;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

const base = {
  ...process.env,
  CELERY_BROKER_URL: AMQP_URL,
  CELERY_TASK_ACKS_LATE: 'true',
  CELERY_TASK_IGNORE_RESULT: 'true',
};
const modes: Record<string, NodeJS.ProcessEnv> = {
  'tracing off': base,
  'tracing on': {
    ...base,
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_TRACES_SAMPLER: 'always_on',
    OTEL_SERVICE_NAME: 'smarter-worker-bench',
  },
};
// Start-up stops each worker as soon as it consumes, before its start is over: stderr is left out, as in startup.ts.
const worker = (queue: string, env: NodeJS.ProcessEnv, stderr: 'inherit' | 'ignore' = 'inherit'): ChildProcess =>
  spawn(process.execPath, ['dist/tasks/main.js', '-Q', queue, '-l', 'warning', '--without-mingle'], {
    env,
    stdio: ['ignore', 'ignore', stderr],
  });

const samples: Sample[] = [];

// Start-up, alternated.
const startQueue = `bench_tracing_start_${process.pid}`;
await freshQueue(startQueue);
await withChannel(async (ch) => {
  for (let i = 0; i < startRounds; i++) {
    for (const [system, env] of rotated(Object.entries(modes), i + REPETITION)) {
      samples.push({
        bench: 'tracing',
        system,
        metric: 'start → consuming',
        unit: 'ms',
        value: await timeToConsuming(ch, startQueue, system, () => worker(startQueue, env, 'ignore')),
      });
    }
  }
});
await deleteQueue(startQueue);

// Throughput, each mode on its own freshly published queue.
const rows: Row[] = [];
for (const [system, env] of rotated(Object.entries(modes), REPETITION)) {
  const queue = `bench_tracing_${system.replace(/\W+/g, '_')}_${process.pid}`;
  await freshQueue(queue);
  await pythonPublish(queue, count);
  const posted = spansPosted;
  process.stderr.write(`${system}\n`);
  rows.push(
    await observed(
      system,
      count,
      () => worker(queue, env),
      () => timeDrain(queue, count),
      `late ack, default flags`,
    ),
  );
  if (system === 'tracing on') rows[rows.length - 1]!.note += `, ${spansPosted - posted} OTLP exports received`;
  await deleteQueue(queue);
}
sink.close();

for (const r of rows) {
  samples.push({ bench: 'tracing', system: r.name, metric: 'tasks/s', unit: '1/s', value: r.rate });
  samples.push({ bench: 'tracing', system: r.name, metric: 'peak RSS', unit: 'MB', value: r.rssMb });
}
record(samples);

process.stdout.write(
  `\nstart → consuming an empty queue, ${startRounds} rounds alternated\n\n| system | median ms | min – max ms |\n|---|---:|---:|\n`,
);
for (const system of Object.keys(modes)) {
  const s = summarize(
    samples.filter((x) => x.system === system && x.metric === 'start → consuming').map((x) => x.value),
  );
  process.stdout.write(`| ${system} | ${s.median.toFixed(0)} | ${s.min.toFixed(0)} – ${s.max.toFixed(0)} |\n`);
}
process.stdout.write(`\n${count} × celery.accumulate\n\n${table(rows, 'tracing off')}\n`);
