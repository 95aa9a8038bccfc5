/** Tasks used by the integration and interop tests; they exercise the worker, not Smarter. */
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { ListHostedZonesCommand, Route53Client } from '@aws-sdk/client-route-53';
import { KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';
import { PythonException, isGaveUp } from '../../lib/errors.js';
import { defineTask } from '../../lib/registry/define-task.js';

export class PyValueError extends PythonException {
  constructor(message: string) {
    super('ValueError', 'builtins', message);
  }
}

let redis: Redis | undefined;
/** Counts runs in real Redis, so that a test can see them across worker processes. */
export function runCounter(): Redis {
  redis ??= new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0');
  return redis;
}

/** A never-wait check's parameters: its key in Redis, its countdown, its attempt and its first run's id. */
export const CHECK_PARAMS = z.object({
  key: z.string(),
  every: z.number(),
  attempt: z.number().int().default(0),
  task_id: z.string().nullable().default(null),
});

export function testTasks(queue: string) {
  return [
    defineTask({
      // Never wait: a check that is "not ready" until its last allowed attempt, then records its run count.
      name: 'test.poll',
      queue,
      params: CHECK_PARAMS,
      checks: { maxAttempts: 5, firstRunIdParam: 'task_id' },
      run: async ({ key, every }, ctx) => {
        await runCounter().hincrby(key, ctx.id, 0);
        await runCounter().incr(`${key}:runs`);
        try {
          return await ctx.checkAgain({ after: every });
        } catch (err) {
          if (!isGaveUp(err)) throw err;
          await runCounter().incr(`${key}:gave-up`);
          return 'gave up';
        }
      },
    }),
    defineTask({
      // Never wait: checks again `times` times (each a new message with a countdown), then is ready.
      name: 'test.recheck',
      queue,
      params: z.object({ times: z.number().int(), every: z.number(), attempt: z.number().int().default(0) }),
      checks: { maxAttempts: 20 },
      run: async ({ times, every, attempt }, ctx) =>
        attempt < times ? ctx.checkAgain({ after: every }) : `ready after ${attempt}`,
    }),
    defineTask({
      // Calls outside systems (Redis, and HTTP through fetch), whose client instrumentations trace them.
      name: 'test.outside',
      queue,
      params: z.object({ url: z.string() }),
      run: async ({ url }) => {
        await runCounter().ping();
        return (await fetch(url)).status;
      },
    }),
    defineTask({
      // Calls MySQL (mysql2) and AWS (the SDK, Route 53 at AWS_ENDPOINT_URL), whose instrumentations trace them.
      name: 'test.outside-db-aws',
      queue,
      params: z.object({ host: z.string(), port: z.number().int(), user: z.string(), password: z.string() }),
      run: async (db) => {
        const connection = await mysql.createConnection(db);
        try {
          await connection.query('SELECT 1');
        } finally {
          await connection.end();
        }
        const route53 = new Route53Client({});
        try {
          return (await route53.send(new ListHostedZonesCommand({}))).HostedZones?.length ?? 0;
        } finally {
          route53.destroy();
        }
      },
    }),
    defineTask({
      // Reads a ConfigMap from the Kubernetes API at KUBECONFIG, through @kubernetes/client-node.
      name: 'test.outside-kube',
      queue,
      params: z.object({ namespace: z.string(), name: z.string() }),
      run: async ({ namespace, name }) => {
        const kc = new KubeConfig();
        kc.loadFromDefault();
        const read = await KubernetesObjectApi.makeApiClient(kc).read({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { namespace, name },
        });
        return read.metadata?.resourceVersion ?? null;
      },
    }),
    defineTask({
      // Sends one e-mail through Smarter's SMTP adapter (nodemailer), which no maintained instrumentation covers.
      name: 'test.outside-smtp',
      queue,
      params: z.object({ host: z.string(), port: z.number().int(), user: z.string(), password: z.string() }),
      run: async ({ host, port, user, password }, ctx) => {
        const { SmtpMailer } = await import('../../tasks/cloud/mailer.js');
        const mailer = new SmtpMailer(
          {
            host,
            port,
            useSsl: false,
            useTls: false,
            username: user,
            password,
            from: 'worker@example.com',
            bcc: '',
            timeoutSeconds: 10,
          },
          ctx.logger,
        );
        try {
          return await mailer.send({ to: ['ops@example.com'], subject: 'traced', text: 'one e-mail' });
        } finally {
          mailer.close();
        }
      },
    }),
    defineTask({
      name: 'test.add',
      queue,
      params: z.object({ x: z.number(), y: z.number() }).strict(),
      run: ({ x, y }) => x + y,
    }),
    defineTask({
      name: 'test.echo',
      queue,
      varArgs: true,
      params: z.object({ args: z.array(z.unknown()) }).passthrough(),
      run: (p) => p,
    }),
    defineTask({
      name: 'test.fail',
      queue,
      params: z.object({ message: z.string() }),
      run: ({ message }) => {
        throw new PyValueError(message);
      },
    }),
    defineTask({
      name: 'test.flaky',
      queue,
      params: z.object({ succeedAfter: z.number().int() }),
      retry: { maxRetries: 5 },
      run: async ({ succeedAfter }, ctx) => {
        if (ctx.retries < succeedAfter) {
          return ctx.retry({ countdown: 0.2, exc: new PyValueError(`attempt ${ctx.retries}`) });
        }
        return `done after ${ctx.retries} retries`;
      },
    }),
    defineTask({
      name: 'test.autoretry',
      queue,
      params: z.object({}),
      retry: { autoretryFor: 'all', maxRetries: 2, retryBackoff: true, retryBackoffMax: 1 },
      run: (_p, ctx) => {
        throw new PyValueError(`always fails (retries=${ctx.retries})`);
      },
    }),
    defineTask({
      name: 'test.sleep',
      queue,
      params: z.object({ seconds: z.number() }),
      run: async ({ seconds }, ctx) => {
        await sleep(seconds * 1000, undefined, { signal: ctx.signal }).catch(() => {
          throw ctx.signal.reason;
        });
        return seconds;
      },
    }),
    defineTask({
      // Retries once with a 2 s countdown; the retry is meant to be picked up by a Python worker.
      name: 'test.handoff',
      queue,
      varArgs: true,
      params: z.object({ args: z.array(z.unknown()) }).passthrough(),
      run: async (_p, ctx) => (ctx.retries === 0 ? ctx.retry({ countdown: 2 }) : 'ts'),
    }),
    defineTask({
      name: 'test.never',
      queue,
      params: z.object({}),
      timeLimit: 1,
      run: () => new Promise(() => undefined),
    }),
    defineTask({
      name: 'test.late',
      queue,
      acksLate: true,
      params: z.object({ seconds: z.number() }),
      run: async ({ seconds }) => {
        await sleep(seconds * 1000);
        return 'late';
      },
    }),
  ];
}

export async function closeRunCounter(): Promise<void> {
  await redis?.quit();
  redis = undefined;
}
