/** Runs one of the tests' Python scripts with Debian's Python Celery (`CELERY_PYTHON` names another Python). */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PYTHON } from './python-worker.js';

const exec = promisify(execFile);

export interface PythonScriptOptions {
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** What the script printed on its last line, as JSON: the scripts may log before it, and print their answer last. */
export async function pythonJson(script: string, args: string[], o: PythonScriptOptions = {}): Promise<unknown> {
  const { stdout } = await exec(PYTHON, [script, ...args], {
    timeout: o.timeoutMs ?? 120_000,
    maxBuffer: 64 * 1024 * 1024,
    env: o.env ?? process.env,
  });
  const last = stdout.trim().split('\n').pop() ?? '';
  if (last === '') throw new Error(`${script} ${args.join(' ')} printed nothing`);
  return JSON.parse(last) as unknown;
}
