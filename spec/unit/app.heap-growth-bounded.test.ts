/**
 * The worker bounds V8's heap to about twice its live data (lib/app/heap-growth.ts), and leaves a factor given
 * on node's command line alone. Two node processes run the same allocation (a live set, then a fixed number of
 * short- and medium-lived objects) and report the largest heap they committed: the bounded one stays well under
 * the one started with `--heap-growing-percent=0` (V8's own heuristic), which boundHeapGrowth must not replace.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const MODULE = fileURLToPath(new URL('../../lib/app/heap-growth.ts', import.meta.url));

const SCRIPT = `
import { boundHeapGrowth } from ${JSON.stringify(MODULE)};
const flag = boundHeapGrowth();
const live = Array.from({ length: 300000 }, (_, i) => ({ i, s: 'x'.repeat(40) + i }));
let most = 0;
let medium = [];
for (let round = 0; round < 400; round++) {
  for (let k = 0; k < 10000; k++) medium.push({ k, a: [k, k + 1], s: 'y' + k });
  if (medium.length > 200000) medium = [];
  most = Math.max(most, process.memoryUsage().heapTotal);
}
console.log(JSON.stringify({ flag, most, live: live.length }));
`;

async function largestHeap(nodeFlags: string[]): Promise<{ flag: string; most: number }> {
  const { stdout } = await exec(
    process.execPath,
    [...nodeFlags, '--import', 'tsx', '--input-type=module', '-e', SCRIPT],
    {
      timeout: 90_000,
    },
  );
  return JSON.parse(stdout) as { flag: string; most: number };
}

test("the worker's heap stays well under V8's own growth, and node's own --heap-growing-percent is kept", async () => {
  const bounded = await largestHeap([]);
  const own = await largestHeap(['--heap-growing-percent=0']);
  expect(bounded.flag).toBe('--heap-growing-percent=100');
  expect(own.flag).toBe('--heap-growing-percent=0');
  expect(bounded.most).toBeLessThan(own.most * 0.8);
}, 200_000);
