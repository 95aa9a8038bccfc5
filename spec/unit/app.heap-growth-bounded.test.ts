/**
 * The worker bounds V8's heap to about twice its live data and keeps the young generation at its starting size
 * (lib/app/heap-growth.ts), and leaves a bound given on node's command line or in NODE_OPTIONS alone. Node processes
 * run the same allocation (a live set, then a fixed number of short- and medium-lived objects) and report the
 * largest heap and new space they committed: the bounded one stays well under the one started with V8's own
 * sizing (`--heap-growing-percent=0 --max-semi-space-size=16`), which boundHeapGrowth must not replace.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const MODULE = fileURLToPath(new URL('../../lib/app/heap-growth.ts', import.meta.url));

const SCRIPT = `
import v8 from 'node:v8';
import { boundHeapGrowth } from ${JSON.stringify(MODULE)};
const flag = boundHeapGrowth();
const live = Array.from({ length: 300000 }, (_, i) => ({ i, s: 'x'.repeat(40) + i }));
let most = 0;
let newSpace = 0;
let medium = [];
for (let round = 0; round < 400; round++) {
  for (let k = 0; k < 10000; k++) medium.push({ k, a: [k, k + 1], s: 'y' + k });
  if (medium.length > 200000) medium = [];
  most = Math.max(most, process.memoryUsage().heapTotal);
  const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  newSpace = Math.max(newSpace, young ? young.space_size : 0);
}
console.log(JSON.stringify({ flag, most, newSpace, live: live.length }));
`;

interface Largest {
  flag: string;
  most: number;
  newSpace: number;
}

async function largestHeap(nodeFlags: string[], nodeOptions = ''): Promise<Largest> {
  const { stdout } = await exec(
    process.execPath,
    [...nodeFlags, '--import', 'tsx', '--input-type=module', '-e', SCRIPT],
    { timeout: 90_000, env: { ...process.env, NODE_OPTIONS: nodeOptions } },
  );
  return JSON.parse(stdout) as Largest;
}

const MB = 1024 * 1024;

test("the worker's heap and young generation stay well under V8's own growth, and node's own flags are kept", async () => {
  const bounded = await largestHeap([]);
  const own = await largestHeap(['--heap-growing-percent=0', '--max-semi-space-size=16']);
  expect(bounded.flag).toBe('--heap-growing-percent=100 --semi-space-growth-factor=1');
  expect(own.flag).toBe('--heap-growing-percent=0 --max-semi-space-size=16');
  expect(bounded.most).toBeLessThan(own.most * 0.8);
  // V8 starts with semi-spaces of 1 MB and doubles them to 16 MB while objects survive.
  expect(bounded.newSpace).toBeLessThanOrEqual(4 * MB);
  expect(own.newSpace).toBeGreaterThanOrEqual(16 * MB);
}, 200_000);

test('a bound given in NODE_OPTIONS is node’s own too', async () => {
  const viaOptions = await largestHeap([], '--max-semi-space-size=8');
  expect(viaOptions.flag).toBe('--heap-growing-percent=100 --max-semi-space-size=8');
  expect(viaOptions.newSpace).toBeGreaterThan(4 * MB);
}, 200_000);
