/**
 * `smarter-worker doctor` (tasks/cli/doctor.ts, lib/doctor/): against a healthy system it reports every check ok
 * and exits 0; each problem made on purpose (queues, databases, key prefixes and a vhost of the test's own) is
 * one FAIL or WARN line that says what to do, and a FAIL exits 1.
 * The cloud check is Smarter's readiness gate (tasks/cloud/readiness.ts, Smarter's `is_taskable()`).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import mysql from 'mysql2/promise';
import { retireQueues } from '../../bench/retire-queue.js';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { ioredis } from '../../lib/broker/redis/ioredis.js';
import { loadConfig } from '../../lib/config/settings.js';
import { doctorCommand } from '../../tasks/cli/doctor.js';
import { SETTINGS } from '../../tasks/settings.js';
import { MYSQL, type TestDatabase, createTestDatabase } from '../support/db.js';
import { AWS_CREDENTIAL_VARS } from '../support/moto.js';

const AMQP = 'amqp://guest:guest@127.0.0.1:5672//';
const id = randomUUID().slice(0, 8);
const queue = `doctor_q_${id}`;
let conn: Awaited<ReturnType<typeof amqp.connect>>;
let db: TestDatabase;
const emptyDb = `doctor_empty_${id}`;
const created: string[] = [];
const AWS_VARS = [...AWS_CREDENTIAL_VARS, 'AWS_ENDPOINT_URL_STS', 'AWS_ENDPOINT_URL'];
const savedAws = Object.fromEntries(AWS_VARS.map((k) => [k, process.env[k]]));

beforeAll(async () => {
  for (const k of AWS_VARS) delete process.env[k];
  conn = await amqp.connect(AMQP);
  const ch = await conn.createChannel();
  await ch.assertQueue(queue, { durable: true });
  await ch.consume(queue, () => undefined);
  created.push(queue);
  db = await createTestDatabase('doctor');
  const admin = await mysql.createConnection({
    host: MYSQL.host,
    port: MYSQL.port,
    user: MYSQL.user,
    password: MYSQL.password,
  });
  await admin.query(`CREATE DATABASE \`${emptyDb}\``);
  await admin.end();
}, 60_000);

afterAll(async () => {
  for (const [k, v] of Object.entries(savedAws)) if (v !== undefined) process.env[k] = v;
  await retireQueues(conn, created).catch(() => undefined);
  await conn.close().catch(() => undefined);
  await db.drop();
  const admin = await mysql.createConnection({
    host: MYSQL.host,
    port: MYSQL.port,
    user: MYSQL.user,
    password: MYSQL.password,
  });
  await admin.query(`DROP DATABASE IF EXISTS \`${emptyDb}\``);
  await admin.end();
});

const HEALTHY: Record<string, string> = {
  CELERY_BROKER_URL: AMQP,
  CELERY_RESULT_BACKEND: 'redis://127.0.0.1:6379/0',
  SMARTER_MYSQL_HOST: MYSQL.host,
  SMARTER_MYSQL_PORT: String(MYSQL.port),
  SMARTER_MYSQL_USER: MYSQL.user,
  SMARTER_MYSQL_PASSWORD: MYSQL.password,
};

async function doctor(
  env: Record<string, string>,
  argv: string[] = ['-Q', queue],
): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const config = loadConfig(SETTINGS, { ...HEALTHY, SMARTER_MYSQL_DATABASE: db.name, ...env }, [
    ...argv,
    '--concurrency',
    '1',
  ]).values;
  const code = await doctorCommand([], { timeout: '5' }, config, (s) => lines.push(...s.split('\n')));
  return { code, lines };
}

const line = (lines: string[], re: RegExp) => lines.find((l) => re.test(l));

test('a healthy system: every check ok (the cloud without credentials only warns), exit 0', async () => {
  const { code, lines } = await doctor({});
  process.stdout.write(`${lines.join('\n')}\n`);
  expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([]);
  expect(line(lines, /^ok {4}broker: /)).toBeDefined();
  expect(line(lines, new RegExp(`^ok {4}queue ${queue}: 0 ready messages, 1 consumer$`))).toBeDefined();
  expect(line(lines, /^ok {4}delay topology: 28 levels declared/)).toBeDefined();
  expect(line(lines, /^ok {4}delay probe: a 1 s countdown arrived after \d+ ms$/)).toBeDefined();
  expect(line(lines, /^ok {4}result backend: /)).toBeDefined();
  expect(line(lines, /^ok {4}database: .* Smarter's \d+ tables present$/)).toBeDefined();
  expect(line(lines, /^WARN {2}cloud: no AWS credentials/)).toBeDefined();
  expect(code).toBe(0);
}, 60_000);

test('wrong broker credentials: one FAIL line naming CELERY_BROKER_URL, exit 1', async () => {
  const { code, lines } = await doctor({ CELERY_BROKER_URL: 'amqp://guest:wrong@127.0.0.1:5672//' });
  expect(line(lines, /^FAIL {2}broker: could not connect .*ACCESS_REFUSED|^FAIL {2}broker: could not connect/)).toMatch(
    /check CELERY_BROKER_URL/,
  );
  expect(code).toBe(1);
}, 60_000);

test('a queue not declared, and one with ready messages and no consumer: a FAIL each saying to start a worker on it', async () => {
  const unconsumed = `doctor_unconsumed_${id}`;
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(unconsumed, { durable: true });
  created.push(unconsumed);
  ch.sendToQueue(unconsumed, Buffer.from('{}'));
  await ch.waitForConfirms();
  await ch.close();
  const { code, lines } = await doctor({}, ['-Q', `doctor_missing_${id},${unconsumed}`]);
  expect(
    line(
      lines,
      new RegExp(
        `^FAIL {2}queue doctor_missing_${id}: not declared: start a worker consuming it \\(smarter-worker -Q doctor_missing_${id}\\)`,
      ),
    ),
  ).toBeDefined();
  expect(
    line(
      lines,
      new RegExp(`^FAIL {2}queue ${unconsumed}: 1 ready message, 0 consumers: no worker consumes it; start one`),
    ),
  ).toBeDefined();
  expect(code).toBe(1);
}, 60_000);

test('a dead-letter queue with messages: a WARN counting them by reason, saying how to read and replay them', async () => {
  const ch = await conn.createConfirmChannel();
  const dlq = `${queue}.dead_letter`;
  await ch.assertQueue(dlq, { durable: true });
  created.push(dlq);
  const send = (reason: string) =>
    ch.sendToQueue(dlq, Buffer.from('[[], {}, {}]'), {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      headers: { task: 't.x', id: randomUUID(), 'x-dead-letter-reason': reason, 'x-original-queue': queue },
    });
  send('NotRegistered');
  send('NotRegistered');
  send('decode error');
  await ch.waitForConfirms();
  await ch.close();
  const { code, lines } = await doctor({});
  const l = line(lines, /^WARN {2}dead letters /);
  expect(l).toContain(
    `dead letters ${dlq}: 3 messages (2 × NotRegistered; 1 × decode error): read them with \`smarter-worker dead-letter list ${queue}\``,
  );
  expect(code).toBe(0);
  const purge = await conn.createChannel();
  await purge.purgeQueue(dlq);
  await purge.close();
}, 60_000);

test("the database unreachable, or without Smarter's tables: a FAIL each, naming what to check or run", async () => {
  const down = await doctor({ SMARTER_MYSQL_PORT: '1' });
  expect(line(down.lines, /^FAIL {2}database: .*:1\/.* unreachable .*check SMARTER_MYSQL_HOST/)).toBeDefined();
  expect(down.code).toBe(1);
  const empty = await doctor({ SMARTER_MYSQL_DATABASE: emptyDb });
  expect(
    line(empty.lines, /^FAIL {2}database tables: \d+ of Smarter's \d+ tables missing .*run Smarter's migrations/),
  ).toBeDefined();
  expect(empty.code).toBe(1);
}, 60_000);

test('the result backend unreachable: a FAIL naming CELERY_RESULT_BACKEND', async () => {
  const { code, lines } = await doctor({ CELERY_RESULT_BACKEND: 'redis://127.0.0.1:1/0' });
  expect(
    line(lines, /^FAIL {2}result backend: redis:\/\/127\.0\.0\.1:1\/0 does not answer .*check CELERY_RESULT_BACKEND/),
  ).toBeDefined();
  expect(code).toBe(1);
}, 60_000);

test('cloud credentials configured but refused (STS unreachable): a FAIL, the readiness gate closed', async () => {
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'AKIADOCTORTEST',
    AWS_SECRET_ACCESS_KEY: 'x',
    AWS_ENDPOINT_URL_STS: 'http://127.0.0.1:1',
    AWS_MAX_ATTEMPTS: '1',
  });
  try {
    const { code, lines } = await doctor({});
    expect(line(lines, /^FAIL {2}cloud: AWS refuses the credentials or cannot be reached/)).toBeDefined();
    expect(code).toBe(1);
  } finally {
    for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_ENDPOINT_URL_STS', 'AWS_MAX_ATTEMPTS']) {
      delete process.env[k];
    }
  }
}, 60_000);

test('a vhost without the delay topology: FAIL naming the missing levels (and the queue not declared)', async () => {
  const vhost = `doctor_${id}`;
  execFileSync('rabbitmqctl', ['add_vhost', vhost], { stdio: 'ignore' });
  try {
    execFileSync('rabbitmqctl', ['set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*'], { stdio: 'ignore' });
    const { code, lines } = await doctor({ CELERY_BROKER_URL: `amqp://guest:guest@127.0.0.1:5672/${vhost}` });
    expect(
      line(
        lines,
        /^FAIL {2}delay topology: missing celery_delayed_0, .*celery_delayed_27: start a worker \(it declares the topology/,
      ),
    ).toBeDefined();
    expect(code).toBe(1);
  } finally {
    execFileSync('rabbitmqctl', ['delete_vhost', vhost], { stdio: 'ignore' });
  }
}, 60_000);

test('Redis: unacked entries older than the visibility timeout, and an overdue delayed set: a FAIL each', async () => {
  const prefix = `doctor_${id}:`;
  const r = new (ioredis().Redis)('redis://127.0.0.1:6379/0');
  const now = Date.now();
  await r.zadd(`${prefix}unacked_index`, now / 1000 - 7200, 'tag-1');
  await r.hset(`${prefix}unacked`, 'tag-1', JSON.stringify(['{}', '', 'nowhere']));
  await r.zadd(`${prefix}unacked_index`, now / 1000 - 10, 'tag-2');
  await r.zadd(`${prefix}smarter.delayed`, now - 600_000, 'not a message');
  try {
    const { code, lines } = await doctor({
      CELERY_BROKER_URL: 'redis://127.0.0.1:6379/0',
      CELERY_BROKER_TRANSPORT_OPTIONS: JSON.stringify({ global_keyprefix: prefix }),
    });
    expect(
      line(
        lines,
        /^FAIL {2}unacked: 1 message unacked for longer than the visibility timeout \(3600 s\), oldest delivered 72\d\d s ago: their worker died/,
      ),
    ).toBeDefined();
    expect(
      line(
        lines,
        /^FAIL {2}delayed set: 1 delayed message, earliest due .*, 6\d\d s overdue: no worker of this build is moving due messages/,
      ),
    ).toBeDefined();
    expect(code).toBe(1);
  } finally {
    const keys = await r.keys(`${prefix}*`);
    if (keys.length > 0) await r.del(...keys);
    r.disconnect();
  }
}, 60_000);
