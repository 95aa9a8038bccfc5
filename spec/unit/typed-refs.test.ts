/**
 * Typed task references: `ctx.applyAsync(definition, [], kwargs)` is checked by the compiler against the
 * task's schema (the `@ts-expect-error` lines fail `npm run typecheck` if the check ever stops working), and
 * goes to the task's declared queue; a name as a string still works for tasks defined elsewhere.
 */
import * as z from 'zod';
import { nullLogger } from '../../lib/logger.js';
import { decodeTaskMessage } from '../../lib/protocol/decode.js';
import { encodeTaskMessage } from '../../lib/protocol/encode.js';
import { defineTask } from '../../lib/registry/define-task.js';
import { type ContextPublisher, createTaskContext } from '../../lib/worker/run/task-context.js';

const continueDeployment = defineTask({
  name: 'app.continue_deployment',
  queue: 'deployments',
  params: z.object({ llmclient_id: z.number(), stage: z.enum(['certificate', 'dns']).default('certificate') }),
  run: () => null,
});

const handTyped = defineTask<{ name: string; attempt: number }, null>({
  name: 'app.hand_typed',
  queue: 'hand',
  params: z.object({ name: z.string(), attempt: z.number().default(0) }),
  run: () => null,
});

function context() {
  const applied: Array<{ name: string; kwargs: Record<string, unknown>; queue: string | undefined }> = [];
  const publisher: ContextPublisher = {
    send: async () => undefined,
    apply: async (name, _args, kwargs, options) => {
      applied.push({ name, kwargs, queue: options?.queue });
      return 'id';
    },
    applySignature: async () => 'id',
  };
  const raw = encodeTaskMessage({ id: 'p', task: 'app.deploy', args: [], kwargs: {} });
  const msg = decodeTaskMessage({ body: raw.body, properties: raw.properties }, { accept: ['json'] });
  const { ctx } = createTaskContext({
    msg,
    task: { queue: 'here' },
    delivery: { queue: 'here', exchange: '', routingKey: 'here', redelivered: false },
    publisher,
    backend: { get: async () => null },
    nodeName: 'n@h',
    deps: {},
    logger: nullLogger(),
    control: new AbortController(),
  });
  return { ctx, applied };
}

test("a task sent by its definition goes to the task's declared queue, with its name", async () => {
  const { ctx, applied } = context();
  await ctx.applyAsync(continueDeployment, [], { llmclient_id: 7 });
  await ctx.applyAsync(continueDeployment, [], { llmclient_id: 7, stage: 'dns' }, { queue: 'elsewhere' });
  expect(applied).toEqual([
    { name: 'app.continue_deployment', kwargs: { llmclient_id: 7 }, queue: 'deployments' },
    { name: 'app.continue_deployment', kwargs: { llmclient_id: 7, stage: 'dns' }, queue: 'elsewhere' },
  ]);
});

test('the compiler checks the keyword arguments against the schema; names as strings stay possible', async () => {
  const { ctx, applied } = context();
  // @ts-expect-error: llmclient_id is a number
  await ctx.applyAsync(continueDeployment, [], { llmclient_id: '7' });
  // @ts-expect-error: a misspelt parameter
  await ctx.applyAsync(continueDeployment, [], { llmclient: 7 });
  // @ts-expect-error: the required parameter is missing
  await ctx.applyAsync(continueDeployment, [], { stage: 'dns' });
  // @ts-expect-error: not one of the stages
  await ctx.applyAsync(continueDeployment, [], { llmclient_id: 7, stage: 'done' });
  // A hand-typed task: names and types checked, each optional (a default may fill it).
  await ctx.applyAsync(handTyped, [], { name: 'x' });
  // @ts-expect-error: attempt is a number
  await ctx.applyAsync(handTyped, [], { attempt: 'one' });
  await ctx.applyAsync('python.only.task', [1, 2], { anything: true });
  expect(applied.at(-1)).toEqual({ name: 'python.only.task', kwargs: { anything: true }, queue: undefined });
});
