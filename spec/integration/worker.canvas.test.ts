/**
 * Canvas steps from a message's embed, on the real broker: callbacks (link), the next chain step, errbacks
 * (link_error), a failed chain's remaining steps; plus STARTED and ignore_result.
 */
import { randomUUID } from 'node:crypto';
import { publishRaw } from '../support/amqp.js';
import { type Harness, workerForFile } from '../support/harness.js';
import type { ResultReader } from '../support/results.js';

let h: Harness;
let results: ResultReader;
workerForFile({ CELERY_TASK_TRACK_STARTED: 'true' }, (w) => ({ h, results } = w));

const sig = (task: string, args: unknown[], options: Record<string, unknown> = {}, immutable = false) => ({
  task,
  args,
  kwargs: {},
  options,
  subtask_type: null,
  immutable,
});

async function send(
  task: string,
  args: unknown[],
  embed: Record<string, unknown>,
  headers: Record<string, unknown> = {},
): Promise<string> {
  const id = randomUUID();
  await publishRaw(
    h.queue,
    JSON.stringify([args, {}, { callbacks: null, errbacks: null, chain: null, chord: null, ...embed }]),
    {
      contentType: 'application/json',
      correlationId: id,
      headers: { lang: 'py', task, id, root_id: id, retries: 0, ...headers },
    },
  );
  return id;
}

test('own wiring: a chain runs step by step, each step getting the previous result first, and lists its child', async () => {
  const last = randomUUID();
  const middle = randomUUID();
  // Remaining chain is reversed: the next step is the last element.
  const first = await send('test.add', [1, 1], {
    chain: [sig('test.add', [100], { task_id: last }), sig('test.add', [10], { task_id: middle })],
  });
  expect((await results.ready(last)).result).toBe(112);
  expect((await results.ready(middle)).result).toBe(12);
  const firstMeta = await results.ready(first);
  expect(firstMeta).toMatchObject({ status: 'SUCCESS', result: 2, children: [[[middle, null], null]] });
  expect((await results.ready(middle)).parent_id).toBe(first);
});

test('own wiring: callbacks get the result prepended; an immutable one does not', async () => {
  const cb = randomUUID();
  const imm = randomUUID();
  await send('test.add', [2, 3], {
    callbacks: [sig('test.add', [1], { task_id: cb }), sig('test.add', [7, 7], { task_id: imm }, true)],
  });
  expect((await results.ready(cb)).result).toBe(6);
  expect((await results.ready(imm)).result).toBe(14);
});

test("own wiring: on failure: errbacks get the failed task's id, and the rest of the chain is marked FAILURE, never run", async () => {
  const eb = randomUUID();
  const next = randomUUID();
  const failed = await send('test.fail', ['nope'], {
    errbacks: [sig('test.echo', [], { task_id: eb })],
    chain: [sig('test.add', [1], { task_id: next })],
  });
  expect((await results.ready(eb)).result).toEqual({ args: [failed] });
  const nextMeta = await results.ready(next);
  expect(nextMeta).toMatchObject({ status: 'FAILURE', result: { exc_type: 'ValueError', exc_message: ['nope'] } });
});

test('own wiring: track_started stores STARTED with pid and node name while the task runs', async () => {
  const id = await send('test.sleep', [1], {});
  const started = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const t = setInterval(() => {
      void results.meta(id).then((m) => {
        if (m?.status === 'STARTED') {
          clearInterval(t);
          resolve(m);
        }
      }, reject);
    }, 20);
  });
  expect(started.result).toEqual({ pid: process.pid, hostname: h.worker.options.nodeName });
  expect((await results.ready(id)).status).toBe('SUCCESS');
});

test('own wiring: ignore_result in the message: nothing is stored', async () => {
  const id = await send('test.add', [1, 2], {}, { ignore_result: true });
  const witness = await send('test.add', [0, 0], {});
  await results.ready(witness);
  await new Promise((r) => setTimeout(r, 300));
  expect(await results.meta(id)).toBeUndefined();
});
