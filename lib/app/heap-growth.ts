/**
 * V8 sizes its heap for a program that allocates fast, not for what a worker keeps:
 * - It lets the old generation grow to about four times what survived its last full collection when collection
 *   is cheap: a worker draining a backlog holds about 30 MB live and still grows to about 140 MB of heap, a
 *   resident size that depends on how long it has run at speed rather than on what it holds. A factor of two
 *   bounds the heap to twice the live data, at a CPU cost within the spread of a 100,000-task drain (peak RSS
 *   about 140 MB instead of 185 on RabbitMQ); a factor of 1.5 cost 5 to 10% more CPU.
 * - It doubles the young generation's semi-spaces, from 1 MB up to 16 MB each, while many objects survive a
 *   scavenge, which a worker's messages in flight always do: after a drain it holds 25 MB more new space than at
 *   start, for no throughput. Kept at the size they have at start, 100,000-task drains (`bench/scale-drain.ts`, 3
 *   alternated runs each) ran within the same spread of rates with a peak RSS of 75–76 MB instead of 103–106 on
 *   Redis, 76–86 instead of 92–100 on RabbitMQ (docs/performance.md).
 */
import v8 from 'node:v8';

/** Each bound: the flag set, and the flags by which node's command line or NODE_OPTIONS says it has its own. */
const BOUNDS: readonly { flag: string; own: RegExp }[] = [
  { flag: '--heap-growing-percent=100', own: /^--heap[-_]growing[-_]percent\b/ },
  { flag: '--semi-space-growth-factor=1', own: /^--(?:max|min)?[-_]?semi[-_]space[-_](?:size|growth[-_]factor)\b/ },
];

/**
 * Sets each bound unless node was started with its own (`node --heap-growing-percent=0 …` or
 * `--max-semi-space-size=16` gives V8's sizing back). V8 reads both each time it resizes, so setting them after
 * start takes effect at the next collection. The growth factor can only be set so: V8 raises one under 2 to 2
 * when it sets the heap up, from the command line or NODE_OPTIONS. Returns the flags in force, node's own as given.
 */
export function boundHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): string {
  const given = [...execArgv, ...nodeOptions.split(/\s+/).filter(Boolean)];
  const inForce: string[] = [];
  for (const { flag, own } of BOUNDS) {
    const theirs = given.filter((a) => own.test(a));
    if (theirs.length > 0) {
      inForce.push(...theirs);
      continue;
    }
    v8.setFlagsFromString(flag);
    inForce.push(flag);
  }
  return inForce.join(' ');
}
