/**
 * The shipped artefacts as child processes: `node dist/…/main.js` with nothing but the environment it is given
 * (no dependency injection, no tsx), its output kept in a file for the test to print when something fails, and
 * whether it is still running.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from './wait.js';

const SOURCES = ['lib', 'tasks', 'beat', 'build'];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (/\.(ts|sql)$/.test(entry.name)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * `dist/` as `npm run build` leaves it, built now when it is missing or older than a source file: the suite runs
 * what ships, never what was built before the last edit.
 */
export function ensureBuilt(): void {
  const entry = 'dist/tasks/main.js';
  const built = existsSync(entry) && existsSync('dist/beat/main.js') ? statSync(entry).mtimeMs : 0;
  const source = Math.max(...SOURCES.map(newestSource));
  if (built >= source) return;
  process.stdout.write(
    built === 0
      ? 'dist/ is missing: running npm run build\n'
      : 'dist/ is older than the sources: running npm run build\n',
  );
  try {
    execFileSync('npm', ['run', 'build'], { stdio: 'pipe', encoding: 'utf8' });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`npm run build failed; the shipped suite runs dist/:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

export interface ShippedProcess {
  readonly name: string;
  readonly pid: number;
  /** Where stdout and stderr go. */
  readonly logFile: string;
  alive(): boolean;
  /** How it ended, once it has: exit code or signal. */
  exit(): string | undefined;
  /** The last `lines` lines of its output. */
  tail(lines?: number): string;
  /** Its output lines that are JSON objects (the logs, when stdout is not a terminal). */
  logs(): Array<Record<string, unknown>>;
  /** SIGTERM (a warm shutdown), then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export function startShipped(o: {
  name: string;
  script: string;
  args: string[];
  env: Record<string, string>;
  logDir: string;
}): ShippedProcess {
  const logFile = join(o.logDir, `${o.name}.log`);
  const out = createWriteStream(logFile);
  const child: ChildProcess = spawn(process.execPath, [o.script, ...o.args], {
    env: o.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(out, { end: false });
  child.stderr?.pipe(out, { end: false });
  let ended: string | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      ended = signal ? `signal ${signal}` : `exit code ${String(code)}`;
      resolve();
    }),
  );
  const text = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  return {
    name: o.name,
    pid: child.pid ?? -1,
    logFile,
    alive: () => ended === undefined,
    exit: () => ended,
    tail: (lines = 40) =>
      text()
        .split('\n')
        .slice(-lines)
        .map((l) => (l.length > 400 ? `${l.slice(0, 400)}…` : l))
        .join('\n'),
    logs: () =>
      text()
        .split('\n')
        .flatMap((l) => {
          if (!l.startsWith('{')) return [];
          try {
            return [JSON.parse(l) as Record<string, unknown>];
          } catch {
            return [];
          }
        }),
    async stop(graceMs = 20_000) {
      if (ended === undefined) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      out.end();
    },
  };
}

/** Waits until `GET http://127.0.0.1:<port><path>` answers 200, failing early with its output if the process exits. */
export async function waitHttpOk(p: ShippedProcess, port: number, path: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    async () => {
      if (!p.alive()) throw new Error(`${p.name} exited (${p.exit() ?? '?'}) before ${path} answered:\n${p.tail()}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}${path}`);
        await res.arrayBuffer();
        return res.status === 200;
      } catch {
        return false;
      }
    },
    timeoutMs,
    250,
  );
}
