/**
 * `smarter-worker doctor`: what an operator asks first, checked and reported one line each, with an exit code
 * (0: nothing failed, warnings aside; 1: something failed). The broker's and the result backend's checks are
 * generic (lib/doctor/); Smarter's database and its tables, and the cloud's readiness gate
 * (tasks/cloud/readiness.ts), are checked here.
 */
import {
  type Finding,
  type BrokerCheckOptions,
  deadLetterChecks,
  delayChecks,
  exitCodeOf,
  fail,
  formatFindings,
  ok,
  queueChecks,
  redisUnackedChecks,
  warn,
  within,
} from '../../lib/doctor/broker-checks.js';
import { resultBackendCheck } from '../../lib/doctor/backend-check.js';
import { redisOptionsOf } from '../../lib/broker/create-broker.js';
import { withBroker } from '../../lib/broker/one-shot.js';
import { redactUrl } from '../../lib/config/settings.js';
import type { ValuesOf } from '../../lib/config/settings.js';
import { awsCredentialsConfigured, stsWhoAmI } from '../cloud/readiness.js';
import { openSmarterDatabase } from '../db/database.js';
import { DJANGO_TABLES } from '../db/django-defaults.js';
import type { SETTINGS } from '../settings.js';
import { type Command, UsageError } from './options.js';

export const DOCTOR_FLAGS = { strings: ['timeout'], booleans: [] } as const;

type Config = ValuesOf<typeof SETTINGS>;

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function brokerFindings(config: Config, timeoutMs: number): Promise<Finding[]> {
  const o: BrokerCheckOptions = {
    queues: config.queues.length > 0 ? config.queues : [config.operationalQueue, config.infrastructureQueue],
    deadLetterSuffix: config.deadLetterSuffix,
    delayed: config.delayedDelivery,
  };
  try {
    return await withBroker(
      config.brokerUrl,
      async (b) => [
        ok('broker', `${redactUrl(config.brokerUrl)} accepts these credentials (${b.kind})`),
        ...(await queueChecks(b, o)),
        ...(await delayChecks(b, o)),
        ...(await deadLetterChecks(b, o)),
        ...(await redisUnackedChecks(b)),
      ],
      timeoutMs,
      redisOptionsOf(config.brokerTransportOptions),
      config.brokerUseSsl,
    );
  } catch (err) {
    return [
      fail(
        'broker',
        `${messageOf(err)}: check CELERY_BROKER_URL (host, port, user, password, vhost) and that the broker runs`,
      ),
    ];
  }
}

async function databaseFindings(config: Config): Promise<Finding[]> {
  const where = `${config.mysqlUser}@${config.mysqlHost}:${config.mysqlPort}/${config.mysqlDatabase}`;
  const db = openSmarterDatabase(config, 1);
  try {
    await db.select('SELECT 1');
    const rows = await db.select('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = ?', [
      config.mysqlDatabase,
    ]);
    const present = new Set(rows.map((r) => String(r.t ?? r.T ?? r.table_name ?? r.TABLE_NAME)));
    const missing = DJANGO_TABLES.filter((t) => !present.has(t));
    if (missing.length > 0) {
      return [
        ok('database', `${where} reachable`),
        fail(
          'database tables',
          `${missing.length} of Smarter's ${DJANGO_TABLES.length} tables missing (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}): run Smarter's migrations (manage.py migrate) against this database, or check SMARTER_MYSQL_DATABASE`,
        ),
      ];
    }
    return [ok('database', `${where} reachable; Smarter's ${DJANGO_TABLES.length} tables present`)];
  } catch (err) {
    return [
      fail(
        'database',
        `${where} unreachable (${messageOf(err)}): check SMARTER_MYSQL_HOST, _PORT, _USER, _PASSWORD, _DATABASE and that MariaDB runs`,
      ),
    ];
  } finally {
    await db.close().catch(() => undefined);
  }
}

/** The readiness gate of the infrastructure tasks: credentials configured, and AWS accepting them (STS). */
async function cloudFindings(timeoutMs: number): Promise<Finding[]> {
  if (!awsCredentialsConfigured(process.env)) {
    return [
      warn(
        'cloud',
        'no AWS credentials configured: the infrastructure tasks end as "not ready" without touching AWS; set an access key pair, AWS_PROFILE, IRSA or AWS_DEPLOYED if they should act',
      ),
    ];
  }
  try {
    const account = await within(stsWhoAmI()(), timeoutMs);
    return [ok('cloud', `AWS accepts the credentials (account ${account})`)];
  } catch (err) {
    return [
      fail(
        'cloud',
        `AWS refuses the credentials or cannot be reached (${messageOf(err)}): the infrastructure tasks are not ready until fixed; check the AWS_* variables or the pod's role (IRSA)`,
      ),
    ];
  }
}

export const doctorCommand: Command<Config> = async (positionals, own, config, out) => {
  if (positionals.length > 0) throw new UsageError('usage: smarter-worker doctor [--timeout SECONDS]');
  const t = own.timeout === undefined ? 10 : Number(own.timeout);
  if (!Number.isFinite(t) || t <= 0) {
    throw new UsageError(`--timeout expects a positive number of seconds, got ${JSON.stringify(own.timeout)}`);
  }
  const findings = [
    ...(await brokerFindings(config, t * 1000)),
    await resultBackendCheck(config.resultBackend, config.redisBackendUseSsl, t * 1000),
    ...(await databaseFindings(config)),
    ...(await cloudFindings(t * 1000)),
  ];
  out(formatFindings(findings));
  const code = exitCodeOf(findings);
  const problems = findings.filter((f) => f.severity !== 'ok').length;
  out(
    code === 0
      ? `healthy${problems > 0 ? ` (${problems} warning(s))` : ''}`
      : `${findings.filter((f) => f.severity === 'fail').length} problem(s)`,
  );
  return code;
};
