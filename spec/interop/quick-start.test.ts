/**
 * The README's quick start on a fresh machine: `npm run system` with no Smarter database and no result
 * backend configured, then the README's Python lines, which must print what the README says. Queue,
 * database and user names are unique so the shared services are not disturbed; nothing else is changed.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { deleteQueues, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { MYSQL } from '../support/db.js';
import { PYTHON } from '../support/python-worker.js';

const run = promisify(execFile);
const { poolSize: _pool, ...ADMIN } = MYSQL;

function quickStart(): { python: string; prints: string } {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## Tests'));
  const python = /```python\n([\s\S]*?)```/.exec(section)?.[1];
  const prints = /\nprints\n\n```text\n([\s\S]*?)```/.exec(section)?.[1];
  if (!python || !prints) throw new Error('the quick start has no Python example and the output it prints');
  return { python, prints };
}

test("npm run system on a machine without the smarter database: the README's Python lines print what the README says", async () => {
  const { python, prints } = quickStart();
  const queue = uniqueName('quick');
  const infra = uniqueName('quick_infra');
  const database = uniqueName('quick_db');
  const user = uniqueName('qs').slice(0, 32);
  const password = randomUUID();
  const schedule = path.join(os.tmpdir(), `${uniqueName('beat')}.json`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE: queue,
    SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE: infra,
    SMARTER_MYSQL_DATABASE: database,
    SMARTER_MYSQL_USER: user,
    SMARTER_MYSQL_PASSWORD: password,
    SMARTER_SYSTEM_HTTP_PORT: '0',
    SMARTER_BEAT_SCHEDULE_FILE: schedule,
  };
  delete env.CELERY_RESULT_BACKEND;
  let out = '';
  const system: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'tasks/system.ts'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  system.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  system.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const admin = await mysql.createConnection(ADMIN);
  try {
    await waitFor(() => out.includes(`created database ${database} on `), 30_000);
    expect(out.split('\n').filter((l) => l.includes('created database'))).toHaveLength(1);
    await waitFor(
      () => (out.match(/worker celery@\S+ running|worker infrastructure@\S+ running/g) ?? []).length >= 2,
      60_000,
    );

    const { stdout } = await run(
      PYTHON,
      ['-c', python.replaceAll('"default_celery_task_queue"', JSON.stringify(queue))],
      { timeout: 60_000 },
    );
    expect(stdout).toBe(prints);
    const [rows] = await admin.query(
      `SELECT resource_locator, total_tokens, total_cost FROM \`${database}\`.account_charge`,
    );
    expect(rows).toEqual([{ resource_locator: 'quickstart', total_tokens: 15, total_cost: '0.00042000' }]);
  } finally {
    const exited = new Promise((r) => system.once('exit', r));
    system.kill('SIGTERM');
    await exited;
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    for (const host of ['localhost', '127.0.0.1']) await admin.query('DROP USER IF EXISTS ?@?', [user, host]);
    await admin.end();
    await deleteQueues([queue, infra, `${queue}.dead_letter`, `${infra}.dead_letter`]);
    rmSync(schedule, { force: true });
  }
}, 120_000);
