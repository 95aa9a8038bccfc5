/** What `npm run bench -- --scale` runs (pure): its steps at the backlogs asked for, and its report's sections. */
import type { BenchInfo } from './report.js';

export const SCALE_SIZES = [10_000, 100_000, 1_000_000];
/** Python Celery drains these backlogs and no larger (a million would take it most of an hour). */
export const PYTHON_MAX = 100_000;
export const PARK_COUNT = 100_000;

export interface ScaleStep {
  bench: string;
  file: string;
  args: string[];
}

/**
 * `--sizes a,b,c` (backlogs) and `--park N` (countdowns parked); without `--park`, as many as the largest
 * backlog up to PARK_COUNT, so a run at small sizes stays small. Start-up is timed with the largest backlog.
 */
export function scaleSteps(sizesFlag?: string, parkFlag?: string): ScaleStep[] {
  const sizes = sizesFlag ? sizesFlag.split(',').map(Number) : SCALE_SIZES;
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n <= 0)) {
    throw new Error(`--sizes wants backlogs such as 10000,100000: ${sizesFlag ?? ''}`);
  }
  const sorted = [...sizes].sort((a, b) => a - b);
  const largest = sorted.at(-1) ?? PARK_COUNT;
  const park = parkFlag ? Number(parkFlag) : Math.min(PARK_COUNT, largest);
  const list = sorted.join(',');
  return [
    { bench: 'scale-rabbitmq', file: 'scale-drain', args: ['rabbitmq', list, String(PYTHON_MAX)] },
    { bench: 'scale-redis', file: 'scale-drain', args: ['redis', list, String(PYTHON_MAX)] },
    { bench: 'scale-park', file: 'scale-park', args: [String(park)] },
    { bench: 'scale-startup', file: 'scale-startup', args: [String(largest), '5'] },
  ];
}

const DRAIN_NOTE =
  'A backlog of cloned celery.accumulate (one sent by Python Celery, published raw), drained late-ack with results ignored: our worker at its defaults, the bare consumer at the same prefetch, Python Celery 5.2.6 prefork -c 2 up to 100k. Peak RSS is the high-water mark (a prefork pool summed); settled RSS is read 3 s after the drain. CPU per task is the user and system time of the consumer (every thread, a prefork pool summed) and of the broker, from the first message taken to the last settled, over the backlog; V8 helper-thread CPU is the part of it that a node consumer spent on threads other than its main one (V8 compiling optimized code and collecting), where the warm-up of a short drain shows. On a broker of its own.';

export const SCALE_BENCHES: Record<string, BenchInfo> = {
  'scale-rabbitmq': {
    title: 'Scale: drain a backlog on RabbitMQ (a node of its own)',
    baseline: 'bare consumer',
    note: `${DRAIN_NOTE} The node's delay levels are declared before the drains, as on any broker a worker has run against: made during a drain of ours, they would cost the broker about half a second of CPU that no other system pays.`,
  },
  'scale-redis': {
    title: 'Scale: drain a backlog on Redis (a redis-server of its own)',
    baseline: 'bare consumer',
    note: `${DRAIN_NOTE} The bare consumer on Redis pops a window in one script and holds it in kombu's unacked hash and index, as a late-acking consumer must, then parses and acks.`,
  },
  'scale-park': {
    title: 'Scale: countdowns of an hour parked by our worker (RabbitMQ, a node of its own)',
    baseline: 'smarter-worker',
    note: 'Intake: first countdown taken → all in the delay levels. The `delayed` commands are timed from process start to exit; purge runs on as many parked again.',
  },
  'scale-startup': {
    title: 'Scale: process start → first task taken, with the largest backlog waiting',
    baseline: 'bare consumer',
    note: "Our worker without mingle, the bare amqplib consumer at the same prefetch, alternated. The backlog's task is Celery's built-in celery.accumulate, so our worker loads none of Smarter's apps: the first message naming a Smarter task loads its app then (11–15 ms for the account app, measured apart).",
  },
};
