/**
 * The shipped suite's world (spec/shipped/smarter-tasks.test.ts): the stand-ins of spec/support/shipped-world.ts, the
 * three processes started as the chart starts them, the rows Smarter's web app would have written, and the ways the
 * suite sends (Debian's Python Celery) and reads outcomes (Redis results, MariaDB rows). The state is exported as
 * live bindings, set by the hooks of `shippedSuiteForFile`.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { REDIS_URL, uniqueName } from './amqp.js';
import { waitFor } from './wait.js';
import { type ChartDeployment, chartEnv, containerProcess } from './chart.js';
import { MYSQL, seed } from './db.js';
import { insertRow } from './django-rows.js';
import { freePort } from './moto.js';
import { insertSecret } from './secrets.js';
import { type ShippedProcess, ensureBuilt, startShipped, waitHttpOk } from './shipped-process.js';
import {
  API,
  CLUSTER,
  EMBEDDING_DIM,
  ENVIRONMENT,
  LLM_API_KEY,
  NS,
  ROOT_DOMAIN,
  type ShippedWorld,
  startShippedWorld,
} from './shipped-world.js';
import { ebsVolume } from './kube-standin.js';
import { pythonJson } from './python-script.js';

export const execFileSyncText = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });
export const OP = 'default_celery_task_queue';
export const INFRA = 'infrastructure_celery_task_queue';
export const P = 'smarter.apps.';
/** Beat entries a previous Beat ran long ago (RedBeat's meta in Redis), so this Beat finds them due at once. */
export const DUE_ENTRIES = ['reconcile-vectorstores', 'sync-infrastructure-inventory', 'aggregate-prompt-history'];

export let w: ShippedWorld;
export let redis: Redis;
export let op: ShippedProcess;
export let infra: ShippedProcess;
export let beat: ShippedProcess;
export let beatPrefix: string;
export const suiteStarted = Date.now();

export interface Send {
  key: string;
  name: string;
  queue: string;
  args?: unknown[] | null;
  kwargs?: Record<string, unknown> | null;
}

/** Sends the batch from Debian's Python Celery (spec/shipped/python/send.py); returns key → task id. */
export async function python(batch: Send[]): Promise<Record<string, string>> {
  const file = join(w.scratch, `${uniqueName('batch')}.json`);
  writeFileSync(file, JSON.stringify(batch));
  return (await pythonJson('spec/shipped/python/send.py', [w.brokerUrl, REDIS_URL, file])) as Record<string, string>;
}

export interface Meta {
  status: string;
  result: unknown;
}

export async function meta(id: string): Promise<Meta | undefined> {
  const v = await redis.get(`celery-task-meta-${id}`);
  return v === null ? undefined : (JSON.parse(v) as Meta);
}

export const TERMINAL = ['SUCCESS', 'FAILURE', 'REVOKED'];

export async function settled(id: string, timeoutMs = 90_000): Promise<Meta> {
  return waitFor(
    async () => {
      const m = await meta(id);
      return m && TERMINAL.includes(m.status) ? m : undefined;
    },
    timeoutMs,
    200,
  );
}

export const rows = (q: string, p: unknown[] = []) => w.t.db.select(q, p);
export const one = async (q: string, p: unknown[] = []) => (await rows(q, p))[0];

export function everyProcessAlive(): void {
  for (const p of [op, infra, beat]) {
    if (!p.alive()) throw new Error(`${p.name} is not running (${p.exit() ?? '?'}):\n${p.tail(60)}`);
  }
}

/** Starts one Deployment's process as the kubelet would: its argv after tini, its env, its own HTTP port. */
export async function startDeployment(
  name: string,
  argv: string[],
  env: Record<string, string>,
): Promise<{ process: ShippedProcess; port: number }> {
  const port = await freePort();
  const [program, script, ...args] = argv;
  if (program !== 'node' || script === undefined) throw new Error(`${name}: the chart runs ${argv.join(' ')}`);
  // Each pod has its own network namespace; here three share one, so each gets its own port for --http-port.
  const i = args.indexOf('--http-port');
  if (i >= 0) args[i + 1] = String(port);
  const own = { ...env };
  for (const k of ['SMARTER_WORKER_HTTP_PORT', 'SMARTER_BEAT_HTTP_PORT']) if (k in own) own[k] = String(port);
  return { process: startShipped({ name, script, args, env: own, logDir: w.scratch }), port };
}

// ---------------------------------------------------------------------------------------------------------------
// The world's rows: what Smarter's web app would have written before calling the tasks.

export interface Vs {
  id: number;
  name: string;
}
export let ids: Awaited<ReturnType<typeof seed>>;
export let accountNumber: string;
export let vsA: Vs;
export let vsB: Vs;
export let vsP: Vs;
export let pineconeIndex: string;
export let providerId: number;

export const validAccountNumber = (accountId: number) =>
  `3141-${String(Math.floor(accountId / 10000) % 10000).padStart(4, '0')}-${String(accountId % 10000).padStart(4, '0')}`;

/** An LLMClient `bot<id>` owned by its account's admin, the account with a valid number and a primary contact. */
export async function newLlmclient(): Promise<{
  id: number;
  accountId: number;
  account: string;
  host: string;
  contact: string;
}> {
  const s = await seed(w.t.db);
  await w.t.db.execute("UPDATE llmclient_llmclient SET name = CONCAT('bot', id) WHERE id = ?", [s.llmclientId]);
  await w.t.db.execute('UPDATE auth_user SET is_staff = 1 WHERE id = ?', [s.userId]);
  const account = validAccountNumber(s.accountId);
  await w.t.db.execute('UPDATE account_account SET account_number = ? WHERE id = ?', [account, s.accountId]);
  const contact = `owner${s.accountId}@example.org`;
  await w.t.db.execute(
    "INSERT INTO account_accountcontact (first_name, last_name, email, is_primary, account_id, created_at, updated_at) VALUES ('Ada', 'L', ?, 1, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
    [contact, s.accountId],
  );
  return { id: s.llmclientId, accountId: s.accountId, account, host: `bot${s.llmclientId}.${account}.${API}`, contact };
}

export let seq = 0;
export async function apiConnection(baseUrl: string, key: string): Promise<number> {
  seq += 1;
  const keyId = await insertSecret(w.t.db, ids.profileId, w.fernetKey, key);
  await w.t.db.execute(
    "INSERT INTO connection_apiconnection (connectionbase_ptr_id, base_url, auth_method, timeout, api_key_id) VALUES (?, ?, 'token', 30, ?)",
    [seq, baseUrl, keyId],
  );
  return seq;
}

export async function vectorstore(o: {
  backend: string;
  connection: number;
  indexName: string;
  status: string;
}): Promise<Vs> {
  seq += 1;
  const name = `kb${seq}`;
  const id = await insertRow(w.t.db, 'vectorstore_vectorstoremeta', {
    name,
    user_profile_id: ids.profileId,
    spec: '{"embeddings": {"chunkSize": 40, "chunkOverlap": 8}}',
    backend: o.backend,
    hosting: 'managed',
    connection_id: o.connection,
    dimension: EMBEDDING_DIM,
    metric: 'cosine',
    embeddings_provider_id: providerId,
    embeddings_model: 'text-embedding-3-small',
    status: o.status,
    index_name: o.indexName,
    deployed_at: new Date().toISOString().replace('T', ' ').replace('Z', ''),
  });
  return { id, name };
}

export async function documentRow(
  vectorstoreId: number,
  content: string,
  status = 'pending',
  minutesAgo = 0,
): Promise<number> {
  const res = await w.t.db.execute(
    `INSERT INTO vectorstore_vectorstoredocument (vectorstore_id, name, source, content_type, content, sha256, size_bytes, metadata, status, status_message, chunk_count, created_at, updated_at)
     VALUES (?, 'manual.pdf', 'upload', '', ?, SHA2(?, 256), 0, '{}', ?, '', 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) - INTERVAL ? MINUTE)`,
    [vectorstoreId, content, `${content}${Math.random()}`, status, minutesAgo],
  );
  return res.insertId;
}

/** Rows Beat's due entries act on: vectorstores whose collection or index reconcile_vectorstores creates. */
export async function seedBeforeStart(): Promise<void> {
  ids = await seed(w.t.db);
  accountNumber = validAccountNumber(ids.accountId);
  await w.t.db.execute('UPDATE account_account SET account_number = ? WHERE id = ?', [accountNumber, ids.accountId]);
  const embeddingsKey = await insertSecret(w.t.db, ids.profileId, w.fernetKey, 'sk-embeddings');
  providerId = await insertRow(w.t.db, 'provider_provider', {
    name: 'embedder',
    user_profile_id: ids.profileId,
    status: 'verified',
    base_url: w.embeddings.url,
    api_key_id: embeddingsKey,
  });
  // Three vectorstores, each with its own server, key and collection: a Qdrant with its index_name, a Qdrant
  // without one (Smarter's default_index_name()), a Pinecone index.
  vsA = await vectorstore({
    backend: 'qdrant',
    connection: await apiConnection(w.qdrant.url, 'qdrant-key-a'),
    indexName: 'handbook-a',
    status: 'provisioning',
  });
  vsB = await vectorstore({
    backend: 'qdrant',
    connection: await apiConnection(w.qdrantB.url, 'qdrant-key-b'),
    indexName: '',
    status: 'provisioning',
  });
  pineconeIndex = `kbp-${Math.random().toString(36).slice(2, 10)}`;
  vsP = await vectorstore({
    backend: 'pinecone',
    connection: await apiConnection('https://api.pinecone.io', 'pinecone-key'),
    indexName: pineconeIndex,
    status: 'provisioning',
  });
  w.kube.put(ebsVolume('pv-shipped', 'vol-0shipped', NS, 'data'));
}

/** RedBeat's meta of an entry last run on 1 January 2026 (seven runs so far), as a Python RedBeat leaves it. */
export const OLD_META =
  '{"last_run_at": {"__type__": "datetime", "year": 2026, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "microsecond": 0, "timezone": 0.0}, "total_run_count": 7}';

/** The shipped world and its three processes, started once for the file, and the rows Beat's due entries act on. */
export function shippedSuiteForFile(): void {
  beforeAll(async () => {
    ensureBuilt();
    w = await startShippedWorld();
    redis = new Redis(REDIS_URL);
    await seedBeforeStart();
    beatPrefix = `redbeat:${w.vhost}:`;
    for (const e of DUE_ENTRIES) await redis.hset(`${beatPrefix}${e}`, 'meta', OLD_META);

    const values = {
      env: {
        SMARTER_MYSQL_HOST: MYSQL.host,
        SMARTER_MYSQL_PORT: String(MYSQL.port),
        SMARTER_MYSQL_DATABASE: w.t.name,
        SMARTER_MYSQL_USER: MYSQL.user,
        ENVIRONMENT,
        ROOT_DOMAIN,
        CELERY_REDBEAT_KEY_PREFIX: beatPrefix,
        // The waits of the infrastructure tasks (60 s, 300 s, 1800 s…) a hundred times shorter.
        SMARTER_WORKER_CHECK_TIME_SCALE: '0.01',
        // The stand-ins listen on loopback over http, which Smarter's public-URL rule refuses.
        SMARTER_WORKER_MCP_ALLOW_PRIVATE_ENDPOINTS: 'true',
        SMARTER_WORKER_PINECONE_CONTROLLER_URL: w.pinecone.controllerUrl,
      },
      workerInfrastructure: {
        env: {
          SMARTER_AWS_EKS_CLUSTER_NAME: CLUSTER,
          SMARTER_SMTP_HOST: w.smtp.host,
          SMARTER_SMTP_PORT: String(w.smtp.port),
          SMARTER_SMTP_USE_TLS: 'False',
          SMARTER_SMTP_USERNAME: 'smarter',
          SMARTER_SMTP_FROM_EMAIL: 'no-reply@platform.example.com',
          SMARTER_DNS_SERVERS: w.dns.server,
          SMARTER_DNS_TIMEOUT: '1',
        },
      },
      secrets: { aws: { name: 'smarter-aws' }, app: { name: 'smarter-app' } },
    };
    const secrets = {
      'smarter-celery': { CELERY_BROKER_URL: w.brokerUrl, CELERY_RESULT_BACKEND: REDIS_URL },
      'smarter-mysql': { SMARTER_MYSQL_PASSWORD: MYSQL.password },
      'smarter-aws': w.awsEnv,
      'smarter-app': {
        SMARTER_FERNET_ENCRYPTION_KEY: w.fernetKey,
        SMARTER_SMTP_PASSWORD: 'stand-in-password',
        ACME_API_KEY: LLM_API_KEY,
        ACMEGOOD_API_KEY: LLM_API_KEY,
      },
    };
    // What a pod has besides its env: a PATH, and what stands in for the cluster (the service account's token is a
    // kubeconfig here; the Pinecone stand-in's CA is trusted as a corporate CA would be).
    const base = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      KUBECONFIG: w.kube.kubeconfig,
      NODE_EXTRA_CA_CERTS: w.caFile,
    };
    const deployments: ChartDeployment[] = ['worker', 'worker-infrastructure', 'beat'];
    const started = await Promise.all(
      deployments.map(async (name) => {
        const { argv, env } = containerProcess(chartEnv(values, name), secrets);
        return { name, ...(await startDeployment(name, argv, { ...base, ...env })) };
      }),
    );
    [op, infra, beat] = started.map((s) => s.process) as [ShippedProcess, ShippedProcess, ShippedProcess];
    await Promise.all(
      started.map((s) => waitHttpOk(s.process, s.port, s.name === 'beat' ? '/healthz' : '/readyz', 120_000)),
    );
    // Beat sends its due entries at once; the workers run them before the tests add their rows.
    await waitFor(
      async () => {
        everyProcessAlive();
        const counts = await Promise.all(DUE_ENTRIES.map((e) => redis.hget(`${beatPrefix}${e}`, 'meta')));
        return counts.every((m) => m !== null && /"total_run_count": 8\b/.test(m));
      },
      60_000,
      250,
    );
    const statuses = () =>
      Promise.all(
        [vsA, vsB, vsP].map(async (v) =>
          one('SELECT status, status_message FROM vectorstore_vectorstoremeta WHERE id = ?', [v.id]),
        ),
      );
    await waitFor(
      async () => {
        everyProcessAlive();
        // Reconciled: ready, or failed with its reason (which the test of Beat then shows).
        return (await statuses()).every((r) => r?.status !== 'provisioning');
      },
      60_000,
      250,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(await statuses())}\n${infra.tail(30)}`);
    });
  }, 300_000);

  afterAll(async () => {
    await Promise.allSettled([op, infra, beat].filter(Boolean).map((p) => p.stop()));
    await redis?.quit();
    await w?.stop();
    process.stdout.write(`shipped suite: ${((Date.now() - suiteStarted) / 1000).toFixed(1)} s\n`);
  }, 120_000);
}
