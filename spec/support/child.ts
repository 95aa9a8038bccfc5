/** Stopping a server process a test started: SIGTERM, then wait until it is gone (nothing if it already is). */
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

export async function terminate(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Each whole line a child writes to `stream`, as it comes: a chunk may end mid-line, and that part waits. */
export function onLines(stream: Readable | null | undefined, onLine: (line: string) => void): void {
  let buf = '';
  stream?.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      onLine(line);
    }
  });
}
