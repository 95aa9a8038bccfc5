#!/usr/bin/env node
/**
 * `npm run system`: the whole system on one machine, against local services with their defaults: the
 * operational worker, the infrastructure worker and Beat, as compose.yaml runs them. Signals are passed on, so
 * Ctrl-C is a warm shutdown of all three.
 */
import { type ChildProcess, spawn } from 'node:child_process';

const OP = process.env.SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE ?? 'default_celery_task_queue';
const INFRA = process.env.SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE ?? 'infrastructure_celery_task_queue';
const base = Number(process.env.SMARTER_SYSTEM_HTTP_PORT ?? 8080);

const parts: Array<[string, string[]]> = [
  ['worker', ['dist/tasks/main.js', '-Q', OP, '-c', '64', '-E', '--http-port', String(base)]],
  ['worker-infrastructure', ['dist/tasks/main.js', '-Q', INFRA, '-c', '16', '-E', '-n', 'infrastructure@%h', '--http-port', String(base + 1)]],
  ['beat', ['dist/beat/main.js', '--http-port', String(base + 2)]],
];

const children: ChildProcess[] = parts.map(([name, args]) => {
  // Own process groups: a Ctrl-C reaches only this process, which passes it on once (a second SIGINT would
  // turn the workers' warm shutdown cold).
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const prefix = (d: Buffer) => d.toString().replace(/^(?=.)/gm, `${name.padEnd(22)}| `);
  child.stdout?.on('data', (d: Buffer) => process.stdout.write(prefix(d)));
  child.stderr?.on('data', (d: Buffer) => process.stderr.write(prefix(d)));
  child.on('exit', (code) => process.stdout.write(`${name} exited with ${code}\n`));
  return child;
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => children.forEach((c) => c.kill(sig)));
await Promise.all(children.map((c) => new Promise((r) => c.once('exit', r))));
