/**
 * The supervisor of a worker that may ask to be replaced, as Celery's master process replaces a pool child
 * past `--max-tasks-per-child` or `--max-memory-per-child`: this process starts the same command as a child
 * (marked by SUPERVISED_CHILD_ENV), passes it SIGTERM, SIGINT and SIGQUIT, and when the child exits with
 * RECYCLE_EXIT_CODE (it finished its runs and returned what it held unstarted) starts a fresh one. Any other
 * exit is its own: the supervisor exits with the child's code. The container therefore stays up, its restart
 * count unchanged; only the child's process id changes. With `--logfile` the child's output goes to the file.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Logger } from '../logger.js';
import { RECYCLE_EXIT_CODE } from '../control/recycle.js';

export const SUPERVISED_CHILD_ENV = 'SMARTER_WORKER_SUPERVISED_CHILD';

const FORWARDED: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGQUIT'];

export interface SuperviseOptions {
  /** The arguments of this process, given to each child unchanged. */
  argv: readonly string[];
  logfile?: string | undefined;
  logger: Logger;
  /** The program the child runs; this process's own by default. */
  command?: readonly string[];
}

export async function supervise(o: SuperviseOptions): Promise<number> {
  const command = o.command ?? [...process.execArgv, process.argv[1] ?? ''];
  let stopping: NodeJS.Signals | undefined;
  let child: ReturnType<typeof spawn> | undefined;
  const forward = (signal: NodeJS.Signals) => {
    stopping = signal;
    child?.kill(signal);
  };
  for (const s of FORWARDED) process.on(s, forward);
  try {
    for (let generation = 1; ; generation++) {
      const out = o.logfile ? openSync(o.logfile, 'a') : 'inherit';
      child = spawn(process.execPath, [...command, ...o.argv], {
        env: { ...process.env, [SUPERVISED_CHILD_ENV]: '1' },
        stdio: ['ignore', out, 'inherit'],
      });
      if (typeof out === 'number') closeSync(out);
      o.logger.info(`supervisor: worker process ${child.pid ?? '?'} started`, { generation, supervisor: process.pid });
      const code = await new Promise<number>((resolve) => {
        child?.on('exit', (c, signal) => {
          // A child still starting (a fresh one after a recycle) has no signal handlers yet: the SIGTERM or SIGINT
          // passed on ends it at once, before it took any message. That is the warm stop that was asked for.
          const warmStop = signal !== null && signal === stopping && signal !== 'SIGQUIT';
          resolve(warmStop ? 0 : (c ?? (signal ? 128 + signalNumber(signal) : 1)));
        });
        child?.on('error', (err) => {
          o.logger.error(`supervisor: could not start the worker: ${err.message}`);
          resolve(1);
        });
      });
      if (code !== RECYCLE_EXIT_CODE || stopping) return code === RECYCLE_EXIT_CODE ? 0 : code;
      o.logger.info('supervisor: the worker asked to be replaced (recycling); starting a fresh one');
    }
  } finally {
    for (const s of FORWARDED) process.off(s, forward);
  }
}

function signalNumber(signal: NodeJS.Signals): number {
  return { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 }[signal as string] ?? 0;
}

/**
 * Celery's `--pidfile`: writes this process's id; a file that names a live process refuses (null), a stale
 * one is replaced. Returns the release, which removes the file.
 */
export function claimPidfile(path: string): (() => void) | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) return null;
  } catch {
    // No file (or unreadable): claim it.
  }
  writeFileSync(path, `${process.pid}\n`);
  return () => rmSync(path, { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
