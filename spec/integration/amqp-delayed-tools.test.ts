/**
 * `smarter-worker delayed purge --queue Q` and `delayed release --queue Q` on RabbitMQ's delay levels (Celery
 * 5.5's native delayed delivery): only Q's parked countdowns are removed, or moved into Q now with body and
 * headers (the ETA) unchanged; the other queues' countdowns stay parked. Always with --queue here: the
 * levels are shared by every test on this broker.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { AMQP_URL, deleteQueues, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type Harness, startWorker } from '../support/harness.js';

const exec = promisify(execFile);
const cli = async (...args: string[]) =>
  (
    await exec(process.execPath, ['--import', 'tsx', 'tasks/main.ts', 'delayed', ...args], {
      timeout: 120_000,
      env: { ...process.env, CELERY_BROKER_URL: AMQP_URL, LOG_LEVEL: 'error' },
    })
  ).stdout;

let h: Harness;
const queues: string[] = [];
beforeAll(async () => {
  h = await startWorker();
}, 60_000);
afterAll(async () => {
  await h.stop();
  // Unbound from the delay levels first (retireQueues), so nothing in flight stalls them.
  await deleteQueues(queues);
});

test("own wiring: delayed purge --queue and delayed release --queue act on that queue's parked countdowns only; released ones arrive unchanged", async () => {
  const purged = uniqueName('dpurge');
  const released = uniqueName('drelease');
  const kept = uniqueName('dkeep');
  queues.push(purged, released, kept);
  for (const q of [purged, released, kept]) await h.worker.publisher.ensureQueue(q);
  for (let i = 0; i < 2; i++) await h.worker.publisher.apply('test.add', [i, i], {}, { queue: purged, countdown: 300 });
  const id = await h.worker.publisher.apply('test.add', [7, 7], {}, { queue: released, countdown: 300 });
  await h.worker.publisher.apply('test.add', [8, 8], {}, { queue: kept, countdown: 300 });

  expect(await cli('purge', '--queue', purged)).toContain(`purged 2 delayed message(s) for ${purged}`);
  expect(await cli('release', '--queue', released)).toContain(`released 1 delayed message(s) for ${released}`);
  const got = await withChannel(async (ch) =>
    waitFor(async () => (await ch.get(released, { noAck: true })) || undefined, 10_000),
  );
  expect(got.properties.headers).toMatchObject({ id, task: 'test.add' });
  expect(Date.parse(String(got.properties.headers?.eta)) - Date.now()).toBeGreaterThan(200_000);
  expect(JSON.parse(got.content.toString())).toEqual([
    [7, 7],
    {},
    { callbacks: null, errbacks: null, chain: null, chord: null },
  ]);
  // Nothing of the purged queue arrives, and the other queue's countdown is still parked (a second release finds it).
  expect(await withChannel(async (ch) => (await ch.checkQueue(purged)).messageCount)).toBe(0);
  expect(await cli('release', '--queue', purged)).toContain('released 0 delayed message(s)');
  expect(await cli('purge', '--queue', kept)).toContain(`purged 1 delayed message(s) for ${kept}`);
}, 120_000);

test('own wiring: the commands that print data print only it on stdout; their logs (the broker connecting) go to stderr', async () => {
  const run = async (...args: string[]) =>
    exec(process.execPath, ['--import', 'tsx', 'tasks/main.ts', ...args], {
      timeout: 120_000,
      env: { ...process.env, CELERY_BROKER_URL: AMQP_URL, LOG_LEVEL: 'info' },
    });
  const listed = await run('delayed');
  const lines = listed.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^level +queue +messages +due within$/);
  for (const l of lines.slice(1, -1)) expect(l).toMatch(/^ +\d+ +celery_delayed_\d+ +\d+ +\S/);
  expect(lines.at(-1)).toMatch(/^\d+ delayed message\(s\)/);
  expect(listed.stderr).toContain('broker connected');

  const q = uniqueName('dclean');
  queues.push(q);
  const purged = await run('delayed', 'purge', '--queue', q);
  expect(purged.stdout).toMatch(new RegExp(`^purged 0 delayed message\\(s\\) for ${q} in [\\d.]+ s[^\\n]*\\n$`));
  expect(purged.stderr).toContain('broker connected');

  for (const args of [['settings'], ['tasks']]) {
    const { stdout } = await run(...args);
    expect(stdout.split('\n').filter((l) => l.startsWith('{'))).toEqual([]);
  }
}, 180_000);
