/** Stopping a server process a test started: SIGTERM, then wait until it is gone (nothing if it already is). */
import type { ChildProcess } from 'node:child_process';

export async function terminate(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}
