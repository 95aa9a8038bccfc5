/**
 * The broker, Redis and database passwords never leave the worker: it runs as `smarter-worker` with a password
 * in each (a RabbitMQ node and a redis-server of the test's own, a MariaDB user made for it), is driven
 * through a run (a task that succeeds, one that writes to the database, one that fails, one dead-lettered and
 * a poison message; `celery inspect conf`, `report`, `stats` from Python; GET /metrics; `settings`; a
 * configuration error; a broker it cannot reach), and everything it printed or answered is searched for each
 * password, as typed and as percent-encoded in a URL: none appears.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { Redis } from 'ioredis';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { MYSQL, type TestDatabase, createTestDatabase } from '../support/db.js';
import { type RabbitNode, freePort, startRabbitNode } from '../support/rabbit-node.js';
import { type RedisNode, startRedisNode } from '../support/redis-node.js';
import { PYTHON } from '../support/python-worker.js';

const exec = promisify(execFile);
const { poolSize: _pool, ...ADMIN } = MYSQL;

// Unguessable, and with characters a URL must percent-encode, so that a half-done redaction still shows.
const secret = (tag: string) => `${tag}-${randomBytes(6).toString('hex')}+/=`;
const BROKER_PASSWORD = secret('brokerpw');
const REDIS_PASSWORD = secret('redispw');
const DB_PASSWORD = secret('dbpw');
const WRONG_PASSWORD = secret('wrongpw');
const rabbitUser = uniqueName('sec');
const enc = encodeURIComponent;

let rabbit: RabbitNode;
let redisNode: RedisNode | undefined;
let redisPort: number;
let db: TestDatabase;
const dbUser = uniqueName('sec').slice(0, 30);
const queue = uniqueName('sec');
let brokerUrl: string;
let backendUrl: string;
let env: NodeJS.ProcessEnv;
/** Everything the worker printed or answered, by where it came from. */
const seen: Array<[string, string]> = [];
const record = (where: string, text: string) => seen.push([where, text]);

beforeAll(async () => {
  rabbit = await startRabbitNode();
  await rabbit.ctl('add_user', rabbitUser, BROKER_PASSWORD);
  await rabbit.ctl('set_permissions', '-p', '/', rabbitUser, '.*', '.*', '.*');
  brokerUrl = `amqp://${rabbitUser}:${enc(BROKER_PASSWORD)}@127.0.0.1:${rabbit.port}//`;

  redisNode = await startRedisNode({
    listen: (port) => ['--port', String(port), '--requirepass', REDIS_PASSWORD],
    probe: { password: REDIS_PASSWORD },
  });
  redisPort = redisNode.port;
  backendUrl = `redis://:${enc(REDIS_PASSWORD)}@127.0.0.1:${redisPort}/0`;

  db = await createTestDatabase('sec');
  const admin = await mysql.createConnection(ADMIN);
  for (const host of ['localhost', '127.0.0.1']) {
    await admin.query('CREATE USER ?@? IDENTIFIED BY ?', [dbUser, host, DB_PASSWORD]);
    await admin.query(`GRANT ALL ON \`${db.name}\`.* TO ?@?`, [dbUser, host]);
  }
  await admin.end();

  env = {
    ...process.env,
    CELERY_BROKER_URL: brokerUrl,
    CELERY_RESULT_BACKEND: backendUrl,
    SMARTER_MYSQL_HOST: MYSQL.host,
    SMARTER_MYSQL_PORT: String(MYSQL.port),
    SMARTER_MYSQL_USER: dbUser,
    SMARTER_MYSQL_PASSWORD: DB_PASSWORD,
    SMARTER_MYSQL_DATABASE: db.name,
    SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE: queue,
    LOG_LEVEL: 'debug',
  };
}, 180_000);

afterAll(async () => {
  await rabbit?.remove();
  await redisNode?.remove();
  await db?.drop();
  const admin = await mysql.createConnection(ADMIN);
  for (const host of ['localhost', '127.0.0.1']) await admin.query('DROP USER IF EXISTS ?@?', [dbUser, host]);
  await admin.end();
}, 60_000);

function runMain(
  args: string[],
  extra: NodeJS.ProcessEnv = {},
  timeoutMs = 60_000,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'tasks/main.ts', ...args],
      { env: { ...env, ...extra }, timeout: timeoutMs },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: `${stdout}\n${stderr}` });
      },
    );
  });
}

const DRIVER = `
import json, sys
from celery import Celery
app = Celery("smarter", broker=sys.argv[1], backend=sys.argv[2])
q = sys.argv[3]
out = {}
out["accumulate"] = app.send_task("celery.accumulate", args=(1, 2), queue=q).get(timeout=30)
out["charge"] = app.send_task("smarter.apps.account.tasks.create_charge", queue=q, kwargs={
    "resource_locator": "secrets-test", "charge_type": "completion", "prompt_tokens": 1,
    "completion_tokens": 1, "total_tokens": 2, "total_cost": "0.1"}).get(timeout=30)
failed = app.send_task("smarter.apps.account.tasks.create_charge", queue=q, kwargs={"nonsense": True})
failed.get(timeout=30, propagate=False)
out["failed"] = [failed.state, repr(failed.result), failed.traceback]
unknown = app.send_task("secrets.no_such_task", queue=q, args=("x",))
unknown.get(timeout=30, propagate=False)
out["unknown"] = [unknown.state, repr(unknown.result)]
print(json.dumps(out, default=str))
`;

test('no password (broker, Redis, database) appears in anything the worker printed or answered in a whole run', async () => {
  const httpPort = await freePort();
  let out = '';
  const worker = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'tasks/main.ts',
      '-Q',
      queue,
      '-c',
      '4',
      '-n',
      `${queue}@%h`,
      '--http-port',
      String(httpPort),
      '--http-host',
      '127.0.0.1',
      '-E',
    ],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  worker.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  worker.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const node = `${queue}@${os.hostname()}`;
  try {
    await waitFor(
      async () =>
        (await fetch(`http://127.0.0.1:${httpPort}/readyz`)
          .then((r) => r.status)
          .catch(() => 0)) === 200,
      60_000,
      100,
    );

    const driven = await exec(PYTHON, ['-c', DRIVER, brokerUrl, backendUrl, queue], { timeout: 120_000 });
    record('python driver', driven.stdout + driven.stderr);
    const results = JSON.parse(driven.stdout) as Record<string, unknown>;
    // The run really went through the broker, Redis and the database with those passwords.
    expect(results.accumulate).toEqual([1, 2]);
    expect(results.charge).toBeNull();
    expect((results.failed as unknown[])[0]).toBe('FAILURE');
    expect((results.unknown as unknown[])[0]).toBe('FAILURE');

    // A poison message too: pickle, refused to the dead-letter queue.
    const conn = await amqp.connect(brokerUrl);
    const ch = await conn.createConfirmChannel();
    ch.sendToQueue(queue, Buffer.from('\x80\x04.'), {
      contentType: 'application/x-python-serialize',
      correlationId: 'poison',
      headers: { task: 'celery.accumulate', id: 'poison' },
    });
    await ch.waitForConfirms();
    await waitFor(async () => (await ch.checkQueue(`${queue}.dead_letter`)).messageCount >= 2, 20_000, 100);
    for (;;) {
      const m = await ch.get(`${queue}.dead_letter`, { noAck: true });
      if (m === false) break;
      record(
        'dead-letter message',
        JSON.stringify({ properties: m.properties, fields: m.fields, body: m.content.toString('latin1') }),
      );
    }
    await conn.close();

    // `conf true`: every setting, defaults included (plain `conf` shows only what differs from them, as Celery).
    for (const cmd of [
      ['conf', 'true'],
      ['conf'],
      ['report'],
      ['stats'],
      ['registered'],
      ['active_queues'],
      ['ping'],
    ]) {
      const r = await exec(PYTHON, ['-m', 'celery', '-b', brokerUrl, 'inspect', ...cmd, '-d', node, '-j'], {
        timeout: 60_000,
      });
      record(`celery inspect ${cmd.join(' ')}`, r.stdout + r.stderr);
      expect(r.stdout).toContain(node);
    }
    const conf = JSON.parse(seen.find(([w]) => w === 'celery inspect conf true')?.[1] ?? '{}') as Record<
      string,
      Record<string, unknown>
    >;
    expect(Object.keys(conf[node] ?? {}).length).toBeGreaterThan(10);

    for (const p of ['/metrics', '/healthz', '/readyz']) {
      record(`GET ${p}`, await (await fetch(`http://127.0.0.1:${httpPort}${p}`)).text());
    }

    // What the results backend holds for those tasks (tracebacks included).
    const redis = new Redis({ port: redisPort, password: REDIS_PASSWORD });
    const keys = await redis.keys('celery-task-meta-*');
    for (const k of keys) record(`redis ${k}`, (await redis.get(k)) ?? '');
    await redis.quit();
    expect(keys.length).toBeGreaterThanOrEqual(4);
  } finally {
    const exited = new Promise((r) => worker.once('exit', r));
    worker.kill('SIGTERM');
    await exited;
    record('worker stdout and stderr', out);
  }
  expect(out).toContain('refused a message on');

  record('smarter-worker settings', (await runMain(['settings'])).out);
  const bad = await runMain(['-Q', queue], {
    CELERY_WORKER_CONCURRENCY: 'many',
    CELERY_RESULT_BACKEND: `kafka://:${REDIS_PASSWORD}@x/0`,
  });
  expect(bad.code).toBe(2);
  expect(bad.out).toContain('invalid configuration');
  record('configuration error', bad.out);
  const badScheme = await runMain([], { CELERY_BROKER_URL: `kafka://u:${BROKER_PASSWORD}@127.0.0.1/` });
  expect(badScheme.code).toBe(2);
  record('configuration error (broker scheme)', badScheme.out);
  // A broker it cannot reach: the retry lines name the URL.
  const closed = await freePort();
  const unreachable = await runMain(
    ['-Q', queue],
    { CELERY_BROKER_URL: `amqp://u:${enc(BROKER_PASSWORD)}@127.0.0.1:${closed}//` },
    8_000,
  );
  expect(unreachable.out.length).toBeGreaterThan(0);
  record('unreachable broker', unreachable.out);
  // A broker that refuses the login (a wrong password, also one not to be printed).
  const refused = await runMain(
    ['-Q', queue],
    { CELERY_BROKER_URL: `amqp://${rabbitUser}:${enc(WRONG_PASSWORD)}@127.0.0.1:${rabbit.port}//` },
    8_000,
  );
  expect(refused.out).toMatch(/ACCESS_REFUSED|403/);
  record('login refused', refused.out);
  if (process.env.SECRETS_DUMP) {
    fs.writeFileSync(process.env.SECRETS_DUMP, seen.map(([w, t]) => `=== ${w}\n${t}`).join('\n'));
  }
  const total = seen.reduce((n, [, t]) => n + t.length, 0);
  expect(total).toBeGreaterThan(10_000);
  const leaks: string[] = [];
  for (const [where, text] of seen) {
    for (const pw of [BROKER_PASSWORD, REDIS_PASSWORD, DB_PASSWORD, WRONG_PASSWORD]) {
      for (const form of new Set([pw, enc(pw), pw.slice(0, pw.indexOf('+'))])) {
        const at = text.indexOf(form);
        if (at >= 0) leaks.push(`${where}: …${text.slice(Math.max(0, at - 80), at + form.length + 20)}…`);
      }
    }
  }
  expect(leaks).toEqual([]);
  // The URLs were shown, as they should be, with the password masked: the search looked where it would be.
  const all = seen.map(([, t]) => t).join('\n');
  expect(all).toContain(`amqp://${rabbitUser}:***@127.0.0.1:${rabbit.port}//`);
  expect(all).toContain(`redis://:***@127.0.0.1:${redisPort}/0`);
  expect(all).toMatch(/"mysqlPassword": ?"\*\*\*"/);
}, 300_000);
