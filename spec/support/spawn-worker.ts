/** A test worker (worker-main.ts or another tsx main here) in a process of its own, for tests that kill or stop it. */
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';

export interface TestWorkerOptions {
  /** The tsx main under spec/support/: `worker-main` (the test tasks) unless given. */
  readonly main?: 'worker-main' | 'fault-worker-main' | 'contain-worker-main';
  readonly queue: string;
  readonly concurrency: number;
  /** Added to this process's environment (the broker, the backend, the worker's settings). */
  readonly env?: Record<string, string | undefined>;
  readonly stdio?: StdioOptions;
}

/** `node --import tsx spec/support/<main>.ts -Q <queue> -c <concurrency>`. */
export function spawnTestWorker(o: TestWorkerOptions): ChildProcess {
  const main = `spec/support/${o.main ?? 'worker-main'}.ts`;
  return spawn(process.execPath, ['--import', 'tsx', main, '-Q', o.queue, '-c', String(o.concurrency)], {
    env: { ...process.env, ...o.env },
    stdio: o.stdio ?? 'ignore',
  });
}
