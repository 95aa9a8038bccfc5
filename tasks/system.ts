#!/usr/bin/env node
/**
 * `npm run system`: the whole system on one machine, against local services with their defaults: the
 * operational worker, the infrastructure worker and Beat, as compose.yaml runs them. Signals are passed on, so
 * Ctrl-C is a warm shutdown of all three. A fresh machine works as it is: results go to the local Redis
 * unless CELERY_RESULT_BACKEND says otherwise, and a missing local `smarter` database is created first.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCommandLine, parsers, type Setting } from '../lib/config/settings.js';
import { createLogger } from '../lib/logger.js';
import { ensureLocalDatabase } from './db/bootstrap.js';
import { SMARTER_SETTINGS } from './settings.js';

const setting = <T>(s: Setting<T>): Setting<T> => s;

export const SYSTEM_SETTINGS = {
  ...SMARTER_SETTINGS,
  httpPort: setting({
    env: ['SMARTER_SYSTEM_HTTP_PORT'],
    default: 8080,
    parse: parsers.int(0, 65_533),
    doc: 'HTTP port of the operational worker; the infrastructure worker and Beat take the next two. 0 turns them off.',
  }),
  dbAdminUser: setting({
    env: ['SMARTER_SYSTEM_DB_ADMIN_USER'],
    default: 'root',
    parse: parsers.string,
    doc: 'Account that creates the local database when it is missing.',
  }),
  dbAdminPassword: setting({
    env: ['SMARTER_SYSTEM_DB_ADMIN_PASSWORD'],
    default: '',
    parse: parsers.string,
    secret: true,
    doc: 'Its password.',
  }),
};

const LOCAL_REDIS = 'redis://localhost:6379/0';

const env: NodeJS.ProcessEnv = { ...process.env };
// Without a result backend a caller's .get() waits forever; an empty value still means "none".
if (env.CELERY_RESULT_BACKEND === undefined) env.CELERY_RESULT_BACKEND = LOCAL_REDIS;
const loaded = loadCommandLine('npm run system', SYSTEM_SETTINGS, env, []);
if (!loaded) process.exit(2);
const config = loaded.values;
const logger = createLogger({ level: 'info' });
await ensureLocalDatabase(
  {
    host: config.mysqlHost,
    port: config.mysqlPort,
    database: config.mysqlDatabase,
    user: config.mysqlUser,
    password: config.mysqlPassword,
    admin: { user: config.dbAdminUser, password: config.dbAdminPassword },
  },
  logger,
).catch((err: unknown) => logger.error(`could not prepare the local database: ${(err as Error).message}`));

// The same runtime that runs this file: dist/*.js after a build, or the TypeScript sources under tsx.
const ext = extname(fileURLToPath(import.meta.url));
const script = (rel: string) => fileURLToPath(new URL(`${rel}${ext}`, import.meta.url));
const port = (n: number) => String(config.httpPort === 0 ? 0 : config.httpPort + n);

const parts: Array<[string, string[]]> = [
  ['worker', [script('./main'), '-Q', config.operationalQueue, '-c', '64', '-E', '--http-port', port(0)]],
  [
    'worker-infrastructure',
    [
      script('./main'),
      '-Q',
      config.infrastructureQueue,
      '-c',
      '16',
      '-E',
      '-n',
      'infrastructure@%h',
      '--http-port',
      port(1),
    ],
  ],
  ['beat', [script('../beat/main'), '--http-port', port(2)]],
];

const children: ChildProcess[] = parts.map(([name, args]) => {
  // Own process groups: a Ctrl-C reaches only this process, which passes it on once (a second SIGINT would
  // turn the workers' warm shutdown cold).
  const child = spawn(process.execPath, [...process.execArgv, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env,
  });
  const prefix = (d: Buffer) => d.toString().replace(/^(?=.)/gm, `${name.padEnd(22)}| `);
  child.stdout?.on('data', (d: Buffer) => process.stdout.write(prefix(d)));
  child.stderr?.on('data', (d: Buffer) => process.stderr.write(prefix(d)));
  child.on('exit', (code) => process.stdout.write(`${name} exited with ${code}\n`));
  return child;
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => children.forEach((c) => c.kill(sig)));
await Promise.all(children.map((c) => new Promise((r) => c.once('exit', r))));
