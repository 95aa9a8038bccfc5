/** Debian's Python Celery as a worker of one of the apps in spec/interop/python/, started as Celery's command line starts it. */
import { type ChildProcess, type StdioOptions, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

export const PYTHON = process.env.CELERY_PYTHON ?? '/usr/bin/python3';

export interface PythonWorkerOptions {
  /** The Celery app module under spec/interop/python/ (`-A`). */
  readonly app: string;
  readonly queue: string;
  /** `solo` unless given; `prefork` with `concurrency` children. */
  readonly pool?: 'solo' | 'prefork';
  readonly concurrency?: number;
  /** The node name (`-n`), e.g. `py-1@%h`. */
  readonly node?: string;
  /** Added to this process's environment (the broker and backend URLs, transport options). */
  readonly env?: Record<string, string | undefined>;
  readonly stdio?: StdioOptions;
}

/** `celery -A <app> worker -Q <queue> --pool <pool> -l warning --without-mingle`, in spec/interop/python/. */
export function spawnPythonWorker(o: PythonWorkerOptions): ChildProcess {
  const args = ['-m', 'celery', '-A', o.app, 'worker', '-Q', o.queue, '--pool', o.pool ?? 'solo'];
  if (o.concurrency !== undefined) args.push('-c', String(o.concurrency));
  args.push('-l', 'warning', '--without-mingle');
  if (o.node !== undefined) args.push('-n', o.node);
  return spawn(PYTHON, args, {
    cwd: 'spec/interop/python',
    env: { ...process.env, ...o.env },
    stdio: o.stdio ?? 'ignore',
  });
}

const exec = promisify(execFile);

/** `celery -A redisapp -b <broker> <args…>` as an operator types it, `env` added (transport options); its stdout. */
export async function redisappCelery(broker: string, env: Record<string, string>, ...args: string[]): Promise<string> {
  const { stdout } = await exec(PYTHON, ['-m', 'celery', '-A', 'redisapp', '-b', broker, ...args], {
    timeout: 60_000,
    env: { ...process.env, ...env, PYTHONPATH: 'spec/interop/python' },
  });
  return stdout;
}
