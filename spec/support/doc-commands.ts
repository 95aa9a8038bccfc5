/**
 * Runs every command of a docs page's ```sh blocks, as written, in the order of the page: a command that serves
 * (a worker, Beat, a Python worker) is started and awaited until it is ready, and stays up while the commands
 * after it run; every other command must exit 0. The commands run in bash with `smarter-worker` and
 * `smarter-beat` (the package's bins), `node dist/…` (the build) and `celery` (Debian's Python Celery) defined as
 * functions onto the TypeScript sources, so nothing is built first. Queue names and HTTP ports are replaced by
 * unique ones, so the shared broker's real queues are never touched.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AMQP_URL, REDIS_URL, deleteQueues, uniqueName, withChannel } from './amqp.js';
import { waitFor } from './wait.js';
import { freePort } from './rabbit-node.js';
import { PYTHON } from './python-worker.js';

/** A wait that does not keep Jest alive once the test is over. */
const delay = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms).unref());

const PRELUDE = `
smarter-worker() { node --import tsx tasks/main.ts "$@"; }
smarter-beat() { node --import tsx beat/main.ts "$@"; }
celery() { "$CELERY_PYTHON" -m celery "$@"; }
node() { if [[ "$1" == dist/*.js ]]; then local f="\${1#dist/}"; shift; command node --import tsx "\${f%.js}.ts" "$@"; else command node "$@"; fi; }
`;

/** The commands of a page's ```sh (or bash, shell) blocks, one per line; `\` continuations joined, comments dropped. */
export function shellCommands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  return blocks
    .flatMap((b) => b.replace(/\\\n/g, ' ').split('\n'))
    .map((l) => l.replace(/(^|\s)#.*$/, '').trim())
    .filter((l) => l.length > 0);
}

/** A command that serves until it is stopped, rather than one that answers and exits. */
export function serves(command: string): boolean {
  return (
    /\bcelery\b.*\sworker(\s|$)/.test(command) ||
    /(smarter-worker|smarter-beat|dist\/(tasks|beat)\/main\.js)(\s+-.*)?$/.test(command)
  );
}

/** The page's queue names and ports, each with the unique stand-in a test uses. */
export interface Substitutions {
  queues: Record<string, string>;
  ports: Record<string, string>;
}

export async function substitutionsFor(queues: string[], ports: number[]): Promise<Substitutions> {
  const s: Substitutions = { queues: {}, ports: {} };
  for (const q of queues) s.queues[q] = uniqueName('doc');
  for (const p of ports) s.ports[String(p)] = String(await freePort());
  return s;
}

function substitute(command: string, s: Substitutions): string {
  let out = command;
  for (const [from, to] of Object.entries(s.queues)) out = out.replace(new RegExp(`\\b${from}\\b`, 'g'), to);
  for (const [from, to] of Object.entries(s.ports)) out = out.replace(new RegExp(`\\b${from}\\b`, 'g'), to);
  return out;
}

async function consumers(queue: string): Promise<number> {
  return withChannel(async (ch) => (await ch.checkQueue(queue)).consumerCount).catch(() => 0);
}

async function ready(command: string, before: number, proc: ChildProcess): Promise<boolean> {
  if (proc.exitCode !== null) throw new Error(`\`${command}\` exited with ${proc.exitCode} instead of serving`);
  const port = /--http-port\s+(\d+)/.exec(command)?.[1];
  // A worker's /readyz; Beat serves /healthz only (it has nothing to consume).
  const get = (p: string) => fetch(`http://127.0.0.1:${port}${p}`, { headers: { connection: 'close' } });
  if (port) {
    return get('/readyz')
      .then((r) => (r.status === 404 ? get('/healthz') : r))
      .then(
        (r) => r.ok,
        () => false,
      );
  }
  const queue = /-Q\s+(\S+)/.exec(command)?.[1];
  if (queue) return (await consumers(queue)) > before;
  throw new Error(`\`${command}\` serves, but names neither --http-port nor -Q to see it ready`);
}

export interface PageRun {
  /** Each command as run, with its exit code (null: it was serving and was stopped). */
  ran: Array<{ command: string; code: number | null; output: string }>;
}

/**
 * Runs the page's commands. `env` is every command's environment; `plainEnv(command)` may give a command the
 * page's own defaults instead (e.g. a check that compares the settings with the chart's files).
 */
export async function runPage(
  file: string,
  s: Substitutions,
  env: NodeJS.ProcessEnv,
  plainEnv: (command: string) => boolean = () => false,
): Promise<PageRun> {
  const commands = shellCommands(readFileSync(file, 'utf8'));
  const schedule = path.join(os.tmpdir(), `${uniqueName('beat')}.json`);
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    CELERY_PYTHON: PYTHON,
    CELERY_BROKER_URL: AMQP_URL,
    CELERY_RESULT_BACKEND: REDIS_URL,
    PYTHONPATH: path.resolve('spec/interop/python'),
    SMARTER_WORKER_HTTP_HOST: '127.0.0.1',
    SMARTER_BEAT_SCHEDULE_FILE: schedule,
    SMARTER_BEAT_LOCK: uniqueName('doc_lock'),
  };
  const serving: ChildProcess[] = [];
  const run: PageRun = { ran: [] };
  try {
    for (const written of commands) {
      const command = plainEnv(written) ? written : substitute(written, s);
      const e = plainEnv(written) ? base : { ...base, ...env };
      let output = '';
      const queue = /-Q\s+(\S+)/.exec(command)?.[1];
      const before = serves(command) && queue ? await consumers(queue) : 0;
      const proc = spawn('bash', ['-c', `${PRELUDE}\n${command}`], {
        env: e,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      proc.stdout?.on('data', (d: Buffer) => (output += d.toString()));
      proc.stderr?.on('data', (d: Buffer) => (output += d.toString()));
      const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
      if (serves(command)) {
        serving.push(proc);
        await waitFor(() => ready(command, before, proc), 90_000, 250).catch((err: unknown) => {
          throw new Error(`\`${command}\` did not become ready: ${String(err)}\n${output.slice(-2000)}`);
        });
        run.ran.push({ command, code: null, output });
      } else {
        const code = await Promise.race([exited, delay(90_000, 'timeout' as const)]);
        if (code === 'timeout') process.kill(-(proc.pid ?? 0), 'SIGKILL');
        run.ran.push({ command, code: code === 'timeout' ? -1 : code, output });
      }
    }
  } finally {
    for (const p of serving.reverse()) {
      if (p.pid === undefined) continue;
      // 'close': every process of the group has let go of the pipes (bash exits before the node it runs).
      let closed = false;
      const done = new Promise<void>((r) => p.once('close', () => r(void (closed = true))));
      const group = (signal: NodeJS.Signals) => {
        try {
          process.kill(-(p.pid ?? 0), signal);
        } catch {
          // the group is gone already
        }
      };
      group('SIGTERM');
      await Promise.race([done, delay(30_000, undefined)]);
      if (!closed) group('SIGKILL');
    }
    rmSync(schedule, { force: true });
    const qs = Object.values(s.queues);
    await deleteQueues([...qs, ...qs.map((q) => `${q}.dead_letter`)]);
  }
  return run;
}
