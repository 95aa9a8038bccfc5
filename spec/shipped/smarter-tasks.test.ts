/**
 * What ships, run as the chart runs it: `node dist/tasks/main.js` twice (the operational Deployment on
 * default_celery_task_queue, the infrastructure one on infrastructure_celery_task_queue) and `node dist/beat/main.js`,
 * each with the command, arguments and environment `helm template` renders for it (spec/support/chart.ts),
 * given only addresses: a RabbitMQ vhost of their own, MariaDB, Redis, moto, the Kubernetes stand-in through a
 * kubeconfig, DNS, SMTP, Qdrant, Pinecone, embeddings, LLM and MCP servers. Debian's Python Celery sends every one
 * of Smarter's 39 task names with protocol 1 and Smarter's argument shapes (smarter-contract.md §3, §5); each test
 * asserts Smarter's outcome where Smarter leaves it, then that no process died. Then every name again with bad
 * arguments: each message settles (a stored failure or success, or a dead letter with its reason), none is lost
 * or left unacknowledged, and the processes are still up.
 */
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { Redis } from 'ioredis';
import { DescribeNodegroupCommand } from '@aws-sdk/client-eks';
import { REDIS_URL, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type ChartDeployment, chartEnv, containerProcess } from '../support/chart.js';
import { MYSQL, seed } from '../support/db.js';
import { insertRow } from '../support/django-rows.js';
import { freePort } from '../support/moto.js';
import { insertSecret } from '../support/secrets.js';
import { type ShippedProcess, ensureBuilt, startShipped, waitHttpOk } from '../support/shipped-process.js';
import {
  API,
  CLUSTER,
  EMBEDDING_DIM,
  ENVIRONMENT,
  LLM_API_KEY,
  LOAD_BALANCER,
  NS,
  ROOT_DOMAIN,
  type ShippedWorld,
  startShippedWorld,
} from '../support/shipped-world.js';

const exec = promisify(execFile);
const execFileSyncText = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });
const PYTHON = process.env.CELERY_PYTHON ?? '/usr/bin/python3';
const OP = 'default_celery_task_queue';
const INFRA = 'infrastructure_celery_task_queue';
const P = 'smarter.apps.';
/** Beat entries a previous Beat ran long ago (RedBeat's meta in Redis), so this Beat finds them due at once. */
const DUE_ENTRIES = ['reconcile-vectorstores', 'sync-infrastructure-inventory', 'aggregate-prompt-history'];

let w: ShippedWorld;
let redis: Redis;
let op: ShippedProcess;
let infra: ShippedProcess;
let beat: ShippedProcess;
let beatPrefix: string;
const suiteStarted = Date.now();

interface Send {
  key: string;
  name: string;
  queue: string;
  args?: unknown[] | null;
  kwargs?: Record<string, unknown> | null;
}

/** Sends the batch from Debian's Python Celery (spec/shipped/python/send.py); returns key → task id. */
async function python(batch: Send[]): Promise<Record<string, string>> {
  const file = join(w.scratch, `${uniqueName('batch')}.json`);
  writeFileSync(file, JSON.stringify(batch));
  const { stdout } = await exec(PYTHON, ['spec/shipped/python/send.py', w.brokerUrl, REDIS_URL, file], {
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, string>;
}

interface Meta {
  status: string;
  result: unknown;
}

async function meta(id: string): Promise<Meta | undefined> {
  const v = await redis.get(`celery-task-meta-${id}`);
  return v === null ? undefined : (JSON.parse(v) as Meta);
}

const TERMINAL = ['SUCCESS', 'FAILURE', 'REVOKED'];

async function settled(id: string, timeoutMs = 90_000): Promise<Meta> {
  return waitFor(
    async () => {
      const m = await meta(id);
      return m && TERMINAL.includes(m.status) ? m : undefined;
    },
    timeoutMs,
    200,
  );
}

const rows = (q: string, p: unknown[] = []) => w.t.db.select(q, p);
const one = async (q: string, p: unknown[] = []) => (await rows(q, p))[0];

function everyProcessAlive(): void {
  for (const p of [op, infra, beat]) {
    if (!p.alive()) throw new Error(`${p.name} is not running (${p.exit() ?? '?'}):\n${p.tail(60)}`);
  }
}

/** Starts one Deployment's process as the kubelet would: its argv after tini, its env, its own HTTP port. */
async function startDeployment(
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

interface Vs {
  id: number;
  name: string;
}
let ids: Awaited<ReturnType<typeof seed>>;
let accountNumber: string;
let vsA: Vs;
let vsB: Vs;
let vsP: Vs;
let pineconeIndex: string;
let providerId: number;

const validAccountNumber = (accountId: number) =>
  `3141-${String(Math.floor(accountId / 10000) % 10000).padStart(4, '0')}-${String(accountId % 10000).padStart(4, '0')}`;

/** An LLMClient `bot<id>` owned by its account's admin, the account with a valid number and a primary contact. */
async function newLlmclient(): Promise<{
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

let seq = 0;
async function apiConnection(baseUrl: string, key: string): Promise<number> {
  seq += 1;
  const keyId = await insertSecret(w.t.db, ids.profileId, w.fernetKey, key);
  await w.t.db.execute(
    "INSERT INTO connection_apiconnection (connectionbase_ptr_id, base_url, auth_method, timeout, api_key_id) VALUES (?, ?, 'token', 30, ?)",
    [seq, baseUrl, keyId],
  );
  return seq;
}

async function vectorstore(o: { backend: string; connection: number; indexName: string; status: string }): Promise<Vs> {
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

async function documentRow(
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
async function seedBeforeStart(): Promise<void> {
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
  w.kube.put({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv-shipped' },
    spec: {
      csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0shipped' },
      claimRef: { namespace: NS, name: 'data' },
    },
  });
}

/** RedBeat's meta of an entry last run on 1 January 2026 (seven runs so far), as a Python RedBeat leaves it. */
const OLD_META =
  '{"last_run_at": {"__type__": "datetime", "year": 2026, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "microsecond": 0, "timezone": 0.0}, "total_run_count": 7}';

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

describe('Beat, started from the chart', () => {
  test("sends its due entries: RedBeat's meta counts the run, and the infrastructure worker acts on it (collections, index, inventory)", async () => {
    for (const e of DUE_ENTRIES) {
      expect(await redis.hget(`${beatPrefix}${e}`, 'meta')).toMatch(/"total_run_count": 8\b/);
    }
    // reconcile-vectorstores created each vectorstore's collection on its own server, with its own key.
    expect(w.qdrant.collections.has('handbook-a')).toBe(true);
    expect([...w.qdrantB.collections.keys()]).toHaveLength(1);
    expect(w.pinecone.indexes.has(pineconeIndex)).toBe(true);
    const statuses = await Promise.all(
      [vsA, vsB, vsP].map(async (v) =>
        one('SELECT status, status_message FROM vectorstore_vectorstoremeta WHERE id = ?', [v.id]),
      ),
    );
    expect(statuses).toEqual([0, 1, 2].map(() => ({ status: 'ready', status_message: '' })));
    // sync-infrastructure-inventory recorded the cluster's volume in the ledger.
    const ledger = await rows('SELECT resource_name, resource_id FROM infrastructure_infrastructureresource');
    expect(JSON.stringify(ledger)).toContain('vol-0shipped');
    everyProcessAlive();
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Smarter's 39 task names, each sent once the way Smarter's callers send it.

interface Prepared {
  args?: unknown[];
  kwargs?: Record<string, unknown>;
  /** The state Smarter's task ends in for this call. */
  state: 'SUCCESS' | 'FAILURE';
  /** Runs beside the task once it is sent: the outside world changing while the task checks (cert-manager, DNS…). */
  meanwhile?: () => Promise<void>;
  /** Smarter's outcome, once the task's own message has settled. */
  check: (m: Meta) => Promise<void>;
}

interface Case {
  /** The task's name after `smarter.apps.`. */
  task: string;
  /** Sent after the cases of earlier phases have settled (what it acts on is their outcome). */
  phase: 1 | 2 | 3;
  prepare: () => Promise<Prepared>;
}

const request = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Bonjour, ça va ?' }], session_key: 'sk-py' };
const response = { id: 'chatcmpl-1', choices: [{ message: { role: 'assistant', content: 'Oui' } }] };
const messages = [
  { role: 'user', content: 'Bonjour, ça va ?' },
  { role: 'assistant', content: 'Oui' },
];
const GPU_SPEC = {
  engine: { name: 'vllm' },
  model: { repository: 'meta-llama/Llama-3.1-8B-Instruct' },
  resources: { cpu: '4', memory: '16Gi', gpuCount: 1 },
  network: { ingress: true },
};
const count = async (q: string, p: unknown[] = []) => Number((await one(q, p))?.n ?? 0);
const llmclientRow = async (id: number) =>
  one(
    'SELECT deployed, dns_verification_status AS dns, tls_certificate_issuance_status AS tls FROM llmclient_llmclient WHERE id = ?',
    [id],
  );
const ingress = (name: string) =>
  w.kube.object({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name, namespace: NS });
const mailsTo = (address: string) => w.smtp.messages.filter((m) => m.to.includes(address));
/** A cert-manager Certificate that issuance made Ready, with its TLS Secret, as for an Ingress applied earlier. */
function issuedCertificate(host: string): void {
  w.kube.put(
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: `${host}-tls`, namespace: NS },
      spec: { secretName: `${host}-tls`, dnsNames: [host], issuerRef: { name: API, kind: 'ClusterIssuer' } },
    },
    'cert-manager',
  );
  w.kube.issueCertificate({ name: `${host}-tls`, namespace: NS });
}
async function customDomain(profileId: number, domain: string, o: { zoneId: string; status: string }): Promise<number> {
  return (
    await w.t.db.execute(
      `INSERT INTO llmclient_llmclientcustomdomain (aws_hosted_zone_id, domain_name, name, description, version, annotations, user_profile_id,
         verification_status, verified_at, verification_message, created_at, updated_at)
       VALUES (?, ?, ?, '', '1.0.0', '[]', ?, ?, ${o.status === 'Verified' ? 'UTC_TIMESTAMP(6)' : 'NULL'}, '', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
      [o.zoneId, domain, `d${Math.random().toString(36).slice(2, 8)}`, profileId, o.status],
    )
  ).insertId;
}
const qdrantPoints = (collection: Map<string, { points: Map<string, { payload: Record<string, unknown> }> }>) =>
  [...collection.values()].flatMap((c) => [...c.points.values()]);
const pointsOf = (docId: number, standIn = w.qdrant) =>
  qdrantPoints(standIn.collections).filter(
    (p) => (p.payload.metadata as { document_id?: unknown } | undefined)?.document_id === docId,
  );
const docRow = async (id: number) =>
  one('SELECT status, status_message, chunk_count FROM vectorstore_vectorstoredocument WHERE id = ?', [id]);
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(4);

/** State shared between phases: the LLMHost launched in phase 1 and destroyed in phase 3, the documents… */
const shared: { llmhost?: number; compute?: number; chargeLocator?: string; docToDelete?: number } = {};

const CASES: Case[] = [
  // prompt/tasks.py
  {
    task: 'prompt.tasks.create_prompt_history',
    phase: 1,
    prepare: async () => ({
      args: [ids.promptId, request, response, messages],
      state: 'SUCCESS',
      check: async () => {
        const [r] = await rows('SELECT request, messages FROM prompt_prompthistory WHERE prompt_id = ?', [
          ids.promptId,
        ]);
        expect(JSON.parse(String(r?.messages))).toEqual(messages);
        expect(JSON.parse(String(r?.request))).toEqual(request);
      },
    }),
  },
  {
    task: 'prompt.tasks.aggregate_prompt_history',
    phase: 1,
    prepare: async () => ({ state: 'SUCCESS', check: async (m) => expect(m.result).toBeNull() }),
  },
  {
    // Prompt.objects.create(session_key, llmclient) leaves ip_address and user_profile NULL: Smarter's database
    // refuses the row, and autoretry's three retries end in the same IntegrityError.
    task: 'prompt.tasks.create_prompt',
    phase: 1,
    prepare: async () => ({
      args: ['sk-created-by-python', ids.llmclientId],
      state: 'FAILURE',
      check: async (m) => {
        expect(JSON.stringify(m.result)).toContain('IntegrityError');
        expect(await count("SELECT COUNT(*) AS n FROM prompt_prompt WHERE session_key = 'sk-created-by-python'")).toBe(
          0,
        );
      },
    }),
  },
  {
    task: 'prompt.tasks.create_prompt_tool_call_history',
    phase: 1,
    prepare: async () => ({
      args: [ids.promptId, ids.pluginId, 'get_weather', JSON.stringify({ city: 'Paris' }), request, response],
      state: 'SUCCESS',
      check: async () => {
        const r = await one(
          'SELECT plugin_id, function_name, function_args FROM prompt_prompttoolcall WHERE prompt_id = ?',
          [ids.promptId],
        );
        expect({ ...r, plugin_id: Number(r?.plugin_id) }).toEqual({
          plugin_id: ids.pluginId,
          function_name: 'get_weather',
          function_args: '{"city":"Paris"}',
        });
      },
    }),
  },
  {
    task: 'prompt.tasks.create_prompt_plugin_usage',
    phase: 1,
    prepare: async () => ({
      kwargs: { prompt_id: ids.promptId, plugin_id: ids.pluginId, input_text: 'weather in Paris?' },
      state: 'SUCCESS',
      check: async () => {
        const usage = await rows('SELECT plugin_id, input_text FROM prompt_promptpluginusage WHERE prompt_id = ?', [
          ids.promptId,
        ]);
        expect(usage.map((r) => ({ ...r, plugin_id: Number(r.plugin_id) }))).toEqual([
          { plugin_id: ids.pluginId, input_text: 'weather in Paris?' },
        ]);
      },
    }),
  },
  // plugin/tasks.py
  {
    task: 'plugin.tasks.create_plugin_selector_history',
    phase: 1,
    prepare: async () => ({
      kwargs: {
        plugin_id: ids.pluginId,
        user_id: ids.userId,
        input_text: 'weather?',
        messages,
        search_term: 'weather',
      },
      state: 'SUCCESS',
      check: async () => {
        const r = await one(
          'SELECT search_term, messages FROM plugin_pluginselectorhistory WHERE plugin_selector_id = ?',
          [ids.selectorId],
        );
        expect(r?.search_term).toBe('weather');
        expect(JSON.parse(String(r?.messages))).toEqual({ input_text: 'weather?' });
      },
    }),
  },
  {
    task: 'plugin.tasks.create_plugin_charge',
    phase: 1,
    prepare: async () => ({
      kwargs: { plugin_id: ids.pluginId },
      state: 'SUCCESS',
      check: async (m) => expect(m.result).toBeNull(),
    }),
  },
  // account/tasks.py
  {
    task: 'account.tasks.create_charge',
    phase: 1,
    prepare: async () => {
      shared.chargeLocator = `userprofile-${uniqueName('r')}`;
      return {
        kwargs: {
          resource_locator: shared.chargeLocator,
          charge_type: 'completion',
          prompt_tokens: 455,
          completion_tokens: 154,
          total_tokens: 609,
          total_cost: { __decimal__: '2.50' },
          provider: 'openai',
          reference: 'fp_b547601dbd',
        },
        state: 'SUCCESS',
        check: async () => {
          expect(
            await rows('SELECT charge_type, total_tokens, total_cost FROM account_charge WHERE resource_locator = ?', [
              shared.chargeLocator,
            ]),
          ).toEqual([{ charge_type: 'completion', total_tokens: 609, total_cost: '2.50000000' }]);
        },
      };
    },
  },
  {
    // aggregate_charges(): the charges rolled into account_aggregatedcharges, then deleted.
    task: 'account.tasks.aggregate_records',
    phase: 2,
    prepare: async () => ({
      state: 'SUCCESS',
      check: async () => {
        expect(
          await count('SELECT COUNT(*) AS n FROM account_charge WHERE resource_locator = ?', [shared.chargeLocator]),
        ).toBe(0);
        expect(
          await count('SELECT COUNT(*) AS n FROM account_aggregatedcharges WHERE resource_locator = ?', [
            shared.chargeLocator,
          ]),
        ).toBe(1);
      },
    }),
  },
  {
    task: 'account.tasks.evaluate_budget_constraints',
    phase: 1,
    prepare: async () => ({ state: 'SUCCESS', check: async (m) => expect(m.result).toBe(0) }),
  },
  // llmclient/tasks/create_llmclient_request.py
  {
    task: 'llmclient.tasks.create_llmclient_request.create_llmclient_request',
    phase: 1,
    prepare: async () => ({
      args: [ids.llmclientId, { session_key: 'sk-shipped', prompt: 'hi' }],
      state: 'SUCCESS',
      check: async () => {
        const requests = await rows(
          'SELECT llmclient_id, session_key FROM llmclient_llmclientrequests WHERE session_key = ?',
          ['sk-shipped'],
        );
        expect(requests.map((r) => ({ ...r, llmclient_id: Number(r.llmclient_id) }))).toEqual([
          { llmclient_id: ids.llmclientId, session_key: 'sk-shipped' },
        ]);
      },
    }),
  },
  // provider/tasks.py, provider/verification.py: the test bank against the LLM stand-in, the production key from
  // the environment (<NAME>_API_KEY, in the chart's app Secret).
  {
    task: 'provider.tasks.verify_provider_model',
    phase: 1,
    prepare: async () => {
      const provider = await insertRow(w.t.db, 'provider_provider', {
        name: 'acme',
        user_profile_id: ids.profileId,
        base_url: w.llm.baseUrl,
        api_key_id: await insertSecret(w.t.db, ids.profileId, w.fernetKey, LLM_API_KEY),
        connectivity_test_path: 'models',
      });
      const model = await insertRow(w.t.db, 'provider_providermodel', {
        provider_id: provider,
        name: 'gpt-4o',
        supports_streaming: 1,
        supports_tools: 1,
      });
      return {
        kwargs: { provider_model_id: model },
        state: 'SUCCESS',
        check: async () => {
          expect((await one('SELECT is_active FROM provider_providermodel WHERE id = ?', [model]))?.is_active).toBe(1);
          const checks = await rows(
            'SELECT verification_type AS type, is_successful AS ok FROM provider_providermodelverification WHERE provider_model_id = ?',
            [model],
          );
          expect(checks.length).toBeGreaterThan(2);
          expect(checks.every((c) => c.ok === 1)).toBe(true);
        },
      };
    },
  },
  {
    task: 'provider.tasks.verify_provider',
    phase: 1,
    prepare: async () => {
      for (const [path, html] of [
        ['/site', '<!DOCTYPE html><html><body>Acme AI</body></html>'],
        ['/tos', '<html><h1>Terms of Service</h1></html>'],
        ['/docs', '<html><h1>Documentation</h1></html>'],
        ['/privacy', '<html><h1>Privacy Policy</h1></html>'],
      ] as const) {
        w.llm.pages.set(path, { status: 200, html });
      }
      const provider = await insertRow(w.t.db, 'provider_provider', {
        name: 'acmegood',
        user_profile_id: ids.profileId,
        base_url: w.llm.baseUrl,
        api_key_id: await insertSecret(w.t.db, ids.profileId, w.fernetKey, 'sk-secret-not-sent'),
        connectivity_test_path: 'models',
        status: 'verified',
        logo: 'logos/acme.svg',
        contact_email: 'ops@acme.example',
        contact_email_verified: '2026-01-01 00:00:00',
        support_email: 'help@acme.example',
        support_email_verified: '2026-01-01 00:00:00',
        website_url: `${w.llm.origin}/site`,
        terms_of_service_url: `${w.llm.origin}/tos`,
        docs_url: `${w.llm.origin}/docs`,
        privacy_policy_url: `${w.llm.origin}/privacy`,
        tos_accepted_at: '2026-01-01 00:00:00',
        tos_accepted_by_id: ids.userId,
      });
      return {
        kwargs: { provider_id: provider },
        state: 'SUCCESS',
        check: async () => {
          expect(
            await one('SELECT status, is_verified, is_active FROM provider_provider WHERE id = ?', [provider]),
          ).toEqual({
            status: 'verified',
            is_verified: 1,
            is_active: 1,
          });
          expect(
            await count(
              'SELECT COUNT(*) AS n FROM provider_providerverification WHERE provider_id = ? AND is_successful = 1',
              [provider],
            ),
          ).toBe(10);
        },
      };
    },
  },
  // llmhost/tasks/__init__.py
  {
    task: 'llmhost.tasks.charge_llmhost_computes',
    phase: 1,
    prepare: async () => {
      await insertRow(w.t.db, 'llmhost_llmhostcompute', {
        name: 'gpu-pool',
        user_profile_id: ids.profileId,
        instance_type: 'g6.2xlarge',
        ready_nodes: 2,
        price_per_hour: '1.25',
      });
      return {
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toMatchObject({ 'gpu-pool': '2.5000' });
          expect(
            await count(
              "SELECT COUNT(*) AS n FROM account_charge WHERE charge_type = 'compute' AND total_cost = '2.50000000'",
            ),
          ).toBe(3);
        },
      };
    },
  },
  // mcpclient/tasks/__init__.py
  {
    task: 'mcpclient.tasks.refresh_mcpclient',
    phase: 1,
    prepare: async () => {
      const id = await insertRow(w.t.db, 'mcpclient_mcpclient', {
        name: 'weather',
        user_profile_id: ids.profileId,
        endpoint_url: w.mcp.url,
        transport: 'http',
        is_active: 0,
      });
      return {
        args: [id],
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe('connected');
          const r = await one('SELECT status, server_name, tools FROM mcpclient_mcpclient WHERE id = ?', [id]);
          expect(r).toMatchObject({ status: 'connected', server_name: 'weather-server' });
          expect(String(r?.tools)).toContain('forecast');
        },
      };
    },
  },
  {
    task: 'mcpclient.tasks.refresh_mcpclients',
    phase: 1,
    prepare: async () => {
      const id = await insertRow(w.t.db, 'mcpclient_mcpclient', {
        name: 'weather-all',
        user_profile_id: ids.profileId,
        endpoint_url: w.mcp.url,
        transport: 'http',
        is_active: 1,
      });
      return {
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe(1);
          // refresh_mcpclient(id) queued for the one active MCPClient, and run by the operational worker.
          await waitFor(
            async () =>
              (await one('SELECT status FROM mcpclient_mcpclient WHERE id = ?', [id]))?.status === 'connected',
            30_000,
            200,
          );
        },
      };
    },
  },
  // guardrail/tasks/__init__.py
  {
    task: 'guardrail.tasks.purge_guardrail_events',
    phase: 1,
    prepare: async () => {
      const old = 'UTC_TIMESTAMP(6) - INTERVAL 100 DAY';
      await w.t.db.execute(
        `INSERT INTO guardrail_guardrailevent (created_at, disposition, reviewed) VALUES
          (${old}, 'allowed', 0), (${old}, 'flagged', 1), (${old}, 'flagged', 0), (UTC_TIMESTAMP(6), 'allowed', 0)`,
      );
      return {
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe(2);
          expect(await count('SELECT COUNT(*) AS n FROM guardrail_guardrailevent')).toBe(2);
        },
      };
    },
  },
  // vectorstore/tasks.py: each vectorstore's own server, key and collection.
  {
    task: 'vectorstore.tasks.load_vectorstore_document',
    phase: 1,
    prepare: async () => {
      const docA = await documentRow(vsA.id, TEXT);
      const docB = await documentRow(vsB.id, TEXT);
      const docP = await documentRow(vsP.id, TEXT);
      shared.docToDelete = await documentRow(
        vsA.id,
        'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(3),
      );
      // The other three documents are sent as Smarter's views send them too, beside this one.
      await python(
        [docB, docP, shared.docToDelete].map((d) => ({
          key: String(d),
          name: `${P}vectorstore.tasks.load_vectorstore_document`,
          queue: OP,
          args: [d],
        })),
      );
      return {
        args: [docA],
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBeGreaterThan(1);
          for (const d of [docA, docB, docP, shared.docToDelete ?? 0]) {
            await waitFor(async () => (await docRow(d))?.status === 'loaded', 30_000, 200);
          }
          expect(pointsOf(docA)).toHaveLength(Number(m.result));
          expect([...(w.qdrant.collections.get('handbook-a')?.points.keys() ?? [])].length).toBeGreaterThan(1);
          // No index_name: the collection Smarter's default_index_name() gives, on that vectorstore's own server.
          expect(pointsOf(docB, w.qdrantB).length).toBeGreaterThan(1);
          expect(pointsOf(docB)).toHaveLength(0);
          const records = [...(w.pinecone.indexes.get(pineconeIndex)?.namespaces.get('')?.values() ?? [])];
          expect(records.length).toBeGreaterThan(1);
        },
      };
    },
  },
  {
    task: 'vectorstore.tasks.delete_vectorstore_document',
    phase: 2,
    prepare: async () => {
      const doc = shared.docToDelete ?? 0;
      const before = pointsOf(doc).length;
      return {
        args: [doc],
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe(true);
          expect(before).toBeGreaterThan(0);
          expect(pointsOf(doc)).toHaveLength(0);
          expect(await docRow(doc)).toBeUndefined();
        },
      };
    },
  },
  {
    task: 'vectorstore.tasks.snapshot_vectorstore',
    phase: 2,
    prepare: async () => ({
      args: [vsA.id],
      state: 'SUCCESS',
      check: async (m) => {
        expect(String(m.result)).toMatch(/^handbook-a-/);
        expect(w.qdrant.collections.get('handbook-a')?.snapshots.map((s) => s.name)).toContain(m.result);
      },
    }),
  },
  {
    task: 'vectorstore.tasks.reconcile_vectorstores',
    phase: 1,
    prepare: async () => ({
      state: 'SUCCESS',
      check: async (m) => {
        expect(m.result).toMatchObject({
          [`${vsA.name} (qdrant, managed)`]: 'ready',
          [`${vsB.name} (qdrant, managed)`]: 'ready',
          [`${vsP.name} (pinecone, managed)`]: 'ready',
        });
      },
    }),
  },
  {
    // A document left pending half an hour ago is queued again, and loaded by the operational worker.
    task: 'vectorstore.tasks.maintain_vectorstores',
    phase: 2,
    prepare: async () => {
      const lost = await documentRow(vsA.id, TEXT, 'pending', 31);
      return {
        state: 'SUCCESS',
        check: async (m) => {
          expect(JSON.stringify(m.result)).toContain(String(lost));
          await waitFor(async () => (await docRow(lost))?.status === 'loaded', 30_000, 200);
        },
      };
    },
  },
  // llmclient/tasks/*.py: the infrastructure worker, through moto, the Kubernetes stand-in, DNS and SMTP.
  {
    task: 'llmclient.tasks.deploy_default_api.deploy_default_api',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      return {
        kwargs: { llmclient_id: l.id },
        state: 'SUCCESS',
        // cert-manager issues the certificate of the applied Ingress; public DNS then answers the host.
        meanwhile: async () => {
          await waitFor(async () => (await llmclientRow(l.id))?.tls === 'Requested', 60_000, 200);
          w.kube.issueCertificate({ name: `${l.host}-tls`, namespace: NS });
          w.dns.set(l.host, 'A', LOAD_BALANCER);
        },
        check: async () => {
          await waitFor(async () => (await llmclientRow(l.id))?.dns === 'Verified', 60_000, 200);
          expect(await llmclientRow(l.id)).toEqual({ deployed: 1, dns: 'Verified', tls: 'Issued' });
          expect(await w.record(w.apiZoneId, l.host, 'A')).toEqual(LOAD_BALANCER);
          expect(ingress(l.host)).toBeDefined();
          await waitFor(() => mailsTo(l.contact).length === 1, 20_000, 200);
          expect(mailsTo(l.contact)[0]?.subject).toBe(`Your Smarter llmclient https://${l.host}/ has been deployed`);
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.deploy_default_api.continue_default_api_deployment',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      await w.t.db.execute(
        "UPDATE llmclient_llmclient SET tls_certificate_issuance_status = 'Requested' WHERE id = ?",
        [l.id],
      );
      w.kube.put(
        { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: l.host, namespace: NS } },
        'smarter',
      );
      issuedCertificate(l.host);
      await w.upsertA(w.apiZoneId, l.host);
      w.dns.set(l.host, 'A', LOAD_BALANCER);
      return {
        kwargs: { llmclient_id: l.id, with_domain_verification: true, task_id: null, stage: 'certificate' },
        state: 'SUCCESS',
        check: async () => {
          await waitFor(async () => (await llmclientRow(l.id))?.dns === 'Verified', 60_000, 200);
          expect(await llmclientRow(l.id)).toEqual({ deployed: 1, dns: 'Verified', tls: 'Issued' });
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.verify_domain.verify_domain',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      await w.upsertA(w.apiZoneId, l.host);
      w.dns.set(l.host, 'A', LOAD_BALANCER);
      return {
        kwargs: { domain_name: l.host, record_type: 'A', llmclient_id: l.id, activate_llmclient: true },
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe(true);
          expect((await llmclientRow(l.id))?.deployed).toBe(1);
        },
      };
    },
  },
  {
    // register → Route 53 zone, ACM certificate, row Verifying; its verify_custom_domain finds the delegation.
    task: 'llmclient.tasks.register_custom_domain.register_custom_domain',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      const domain = `bots${l.accountId}.example.net`;
      const zoneOf = async () =>
        String(
          (
            await one('SELECT aws_hosted_zone_id AS z FROM llmclient_llmclientcustomdomain WHERE domain_name = ?', [
              domain,
            ])
          )?.z ?? '',
        );
      return {
        kwargs: { account_id: l.accountId, domain_name: domain },
        state: 'SUCCESS',
        meanwhile: async () => {
          const zoneId = await waitFor(async () => (await zoneOf()) || undefined, 60_000, 200);
          w.dns.set(domain, 'NS', await w.nameServers(zoneId));
        },
        check: async (m) => {
          expect(m.result).toBe(true);
          expect((await zoneOf()).length).toBeGreaterThan(0);
          await waitFor(
            async () =>
              (
                await one(
                  'SELECT verification_status AS s FROM llmclient_llmclientcustomdomain WHERE domain_name = ?',
                  [domain],
                )
              )?.s === 'Verified',
            60_000,
            250,
          );
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.verify_custom_domain.verify_custom_domain',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      const domain = `verify${l.accountId}.example.net`;
      const zone = await w.zone(domain);
      w.dns.set(domain, 'NS', zone.nameServers);
      const id = await customDomain(
        (await one('SELECT user_profile_id AS p FROM llmclient_llmclient WHERE id = ?', [l.id]))?.p as number,
        domain,
        {
          zoneId: zone.id,
          status: 'Verifying',
        },
      );
      return {
        kwargs: { custom_domain_id: id, sleep_interval: 60, max_attempts: 10 },
        state: 'SUCCESS',
        check: async () => {
          await waitFor(
            async () =>
              (await one('SELECT verification_status AS s FROM llmclient_llmclientcustomdomain WHERE id = ?', [id]))
                ?.s === 'Verified',
            60_000,
            250,
          );
          await waitFor(() => mailsTo(l.contact).length >= 1, 20_000, 200);
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.deploy_custom_api.deploy_custom_api',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      const domain = `custom${l.accountId}.example.net`;
      const zone = await w.zone(domain);
      const profile = (await one('SELECT user_profile_id AS p FROM llmclient_llmclient WHERE id = ?', [l.id]))
        ?.p as number;
      const id = await customDomain(profile, domain, { zoneId: zone.id, status: 'Verified' });
      await w.t.db.execute('UPDATE llmclient_llmclient SET deployed = 1, custom_domain_id = ? WHERE id = ?', [
        id,
        l.id,
      ]);
      const host = `bot${l.id}.${domain}`;
      return {
        kwargs: { llmclient_id: l.id },
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe(host);
          expect(await w.record(zone.id, host, 'A')).toEqual(LOAD_BALANCER);
          expect(ingress(host)).toBeDefined();
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.create_custom_domain_dns_record.create_custom_domain_dns_record',
    phase: 1,
    prepare: async () => {
      const domain = `records${ids.accountId}.example.net`;
      const zone = await w.zone(domain);
      const id = await customDomain(ids.profileId, domain, { zoneId: zone.id, status: 'Verified' });
      return {
        args: [id, `_dmarc.${domain}`, 'TXT', '"v=DMARC1; p=none"', 600],
        state: 'SUCCESS',
        check: async () => {
          expect(await w.record(zone.id, `_dmarc.${domain}`, 'TXT')).toEqual(['"v=DMARC1; p=none"']);
          expect(
            await rows(
              'SELECT record_name, record_type, record_value, record_ttl FROM llmclient_llmclientcustomdomaindns WHERE custom_domain_id = ?',
              [id],
            ),
          ).toEqual([
            {
              record_name: `_dmarc.${domain}`,
              record_type: 'TXT',
              record_value: '"v=DMARC1; p=none"',
              record_ttl: 600,
            },
          ]);
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.delete_default_api.delete_default_api',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      await w.upsertA(w.apiZoneId, l.host);
      w.kube.put(
        { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: l.host, namespace: NS } },
        'smarter',
      );
      issuedCertificate(l.host);
      return {
        kwargs: { name: `bot${l.id}`, api_url: `https://${l.host}/`, account_number: l.account },
        state: 'SUCCESS',
        check: async () => {
          expect(await w.record(w.apiZoneId, l.host, 'A')).toBeUndefined();
          expect(ingress(l.host)).toBeUndefined();
          expect(
            w.kube.object({ apiVersion: 'v1', kind: 'Secret', name: `${l.host}-tls`, namespace: NS }),
          ).toBeUndefined();
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.destroy_domain_a_record.destroy_domain_A_record',
    phase: 1,
    prepare: async () => {
      const host = `gone${ids.accountId}.${accountNumber}.${API}`;
      await w.upsertA(w.apiZoneId, host);
      return {
        kwargs: { hostname: host, api_host_domain: API },
        state: 'SUCCESS',
        check: async () => expect(await w.record(w.apiZoneId, host, 'A')).toBeUndefined(),
      };
    },
  },
  {
    task: 'llmclient.tasks.undeploy_default_api.undeploy_default_api',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      await w.t.db.execute(
        "UPDATE llmclient_llmclient SET deployed = 1, dns_verification_status = 'Verified' WHERE id = ?",
        [l.id],
      );
      await w.upsertA(w.apiZoneId, l.host);
      return {
        kwargs: { llmclient_id: l.id },
        state: 'SUCCESS',
        check: async () => {
          expect(await w.record(w.apiZoneId, l.host, 'A')).toBeUndefined();
          expect(await llmclientRow(l.id)).toMatchObject({ deployed: 0, dns: 'Not Verified' });
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.verify_certificate.verify_certificate',
    phase: 1,
    prepare: async () => {
      const arn = await w.requestCertificate(`cert${ids.accountId}.example.net`);
      return { args: [arn], state: 'SUCCESS', check: async (m) => expect(m.result).toBeNull() };
    },
  },
  // llmhost/tasks/__init__.py: EKS in moto, the workload in the Kubernetes stand-in.
  {
    task: 'llmhost.tasks.launch_llmhost',
    phase: 1,
    prepare: async () => {
      shared.compute = await insertRow(w.t.db, 'llmhost_llmhostcompute', {
        name: 'gpu-l4-shipped',
        user_profile_id: ids.profileId,
        instance_type: 'g6.2xlarge',
        cpu: 8,
        memory_gb: 32,
        gpu_type: 'L4',
        gpu_count: 1,
        gpu_memory_gb: 24,
        max_nodes: 4,
        price_per_hour: '0.9800',
      });
      const id = await insertRow(w.t.db, 'llmhost_llmhost', {
        name: 'llama',
        user_profile_id: ids.profileId,
        spec: JSON.stringify({ ...GPU_SPEC, compute: 'gpu-l4-shipped' }),
        compute_id: shared.compute,
        status: 'inactive',
      });
      shared.llmhost = id;
      const base = `llmhost-${id}-llama`;
      return {
        args: [id],
        state: 'SUCCESS',
        // The node joins and the Deployment becomes ready while reconcile_llmhost_compute checks every 0.3 s.
        meanwhile: async () => {
          await waitFor(
            () => w.kube.object({ apiVersion: 'apps/v1', kind: 'Deployment', name: base, namespace: NS }),
            60_000,
            200,
          );
          w.kube.put(
            {
              apiVersion: 'v1',
              kind: 'Node',
              metadata: { name: `node-${id}`, labels: { 'smarter.sh/compute': 'gpu-l4-shipped' } },
              spec: { providerID: `aws:///us-east-1a/i-shipped${id}` },
              status: { conditions: [{ type: 'Ready', status: 'True' }] },
            },
            'kubelet',
          );
          w.kube.put(
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              metadata: { name: base, namespace: NS },
              status: { readyReplicas: 1 },
            },
            'kube-controller-manager',
          );
        },
        check: async (m) => {
          expect(m.result).toBe('provisioning');
          for (const [kind, apiVersion, name] of [
            ['PersistentVolumeClaim', 'v1', `${base}-models`],
            ['Secret', 'v1', base],
            ['Service', 'v1', base],
            ['Ingress', 'networking.k8s.io/v1', base],
          ] as const) {
            expect(w.kube.object({ apiVersion, kind, name, namespace: NS })).toBeDefined();
          }
          const ng = await w.eks.send(
            new DescribeNodegroupCommand({
              clusterName: CLUSTER,
              nodegroupName: `smarter-alpha-${shared.compute}-gpu-l4-shipped`,
            }),
          );
          expect(ng.nodegroup?.labels).toEqual({ 'smarter.sh/compute': 'gpu-l4-shipped' });
          expect(await w.record(w.apiZoneId, `${base}.${accountNumber}.${API}`, 'A')).toEqual(LOAD_BALANCER);
          await waitFor(
            async () => (await one('SELECT status FROM llmhost_llmhost WHERE id = ?', [id]))?.status === 'active',
            60_000,
            250,
          );
        },
      };
    },
  },
  {
    task: 'llmhost.tasks.refresh_llmhost_status',
    phase: 2,
    prepare: async () => ({
      kwargs: { llmhost_id: shared.llmhost },
      state: 'SUCCESS',
      check: async (m) => expect(m.result).toEqual({ llama: 'active' }),
    }),
  },
  {
    task: 'llmhost.tasks.destroy_llmhost',
    phase: 3,
    prepare: async () => {
      const id = shared.llmhost ?? 0;
      const base = `llmhost-${id}-llama`;
      return {
        args: [id],
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe('inactive');
          expect(
            w.kube.object({ apiVersion: 'apps/v1', kind: 'Deployment', name: base, namespace: NS }),
          ).toBeUndefined();
          expect(
            w.kube.object({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: `${base}-models`, namespace: NS }),
          ).toBeDefined();
          // destroy_domain_A_record.delay(hostname=…, api_host_domain=…), run by this worker.
          await waitFor(
            async () => (await w.record(w.apiZoneId, `${base}.${accountNumber}.${API}`, 'A')) === undefined,
            30_000,
            250,
          );
        },
      };
    },
  },
  {
    task: 'llmhost.tasks.reconcile_llmhost_compute',
    phase: 1,
    prepare: async () => {
      const id = await insertRow(w.t.db, 'llmhost_llmhostcompute', {
        name: 'cpu-idle',
        user_profile_id: ids.profileId,
        instance_type: 'm6i.large',
        max_nodes: 2,
      });
      return {
        args: [id],
        state: 'SUCCESS',
        check: async () => {
          expect(
            (await one('SELECT last_reconciled_at FROM llmhost_llmhostcompute WHERE id = ?', [id]))?.last_reconciled_at,
          ).not.toBeNull();
        },
      };
    },
  },
  {
    task: 'llmhost.tasks.reconcile_llmhost_computes',
    phase: 2,
    prepare: async () => ({
      state: 'SUCCESS',
      check: async (m) => expect(Object.keys(m.result as object)).toContain('gpu-l4-shipped'),
    }),
  },
  // infrastructure/tasks.py
  {
    task: 'infrastructure.tasks.sync_infrastructure_inventory',
    phase: 1,
    prepare: async () => {
      w.kube.put({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'pv-later' },
        spec: {
          csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0later' },
          claimRef: { namespace: NS, name: 'cache' },
        },
      });
      return {
        state: 'SUCCESS',
        check: async (m) => {
          expect(typeof m.result).toBe('object');
          const ledger = await rows(
            'SELECT resource_id, status FROM infrastructure_infrastructureresource WHERE resource_id = ?',
            ['vol-0later'],
          );
          expect(ledger).toHaveLength(1);
        },
      };
    },
  },
];

/** The 39 names and queues the shipped binary declares (`smarter-worker tasks --contract`). */
let declaredNames: Map<string, string> | undefined;
function contract(): Map<string, string> {
  if (declaredNames) return declaredNames;
  const out = execFileSyncText(process.execPath, ['dist/tasks/main.js', 'tasks', '--contract']);
  const names = new Map<string, string>();
  for (const line of out.split('\n')) {
    const m = /^(smarter\.apps\.\S+)\s+(operational|infrastructure) \(([^)]+)\)/.exec(line);
    if (m?.[1] && m[3]) names.set(m[1], m[3]);
  }
  declaredNames = names;
  return names;
}

const sent = new Map<string, { id: string; prepared: Prepared }>();
const outcomes = new Map<string, { state: string; error: unknown }>();

describe("Smarter's 39 task names, sent by Python Celery (protocol 1) to the shipped workers", () => {
  let declared: Map<string, string>;

  beforeAll(async () => {
    declared = contract();
    for (const phase of [1, 2, 3] as const) {
      const cases = CASES.filter((c) => c.phase === phase);
      const prepared = new Map<string, Prepared>();
      for (const c of cases) prepared.set(c.task, await c.prepare());
      const ids = await python(
        cases.map((c) => {
          const p = prepared.get(c.task);
          return {
            key: c.task,
            name: P + c.task,
            queue: declared.get(P + c.task) ?? '?',
            args: p?.args,
            kwargs: p?.kwargs,
          };
        }),
      );
      for (const c of cases) sent.set(c.task, { id: ids[c.task] ?? '', prepared: prepared.get(c.task) as Prepared });
      // A case that fails here fails its own test below, not the others.
      const meanwhile = new Map<string, unknown>();
      await Promise.all([
        ...cases.map((c) =>
          sent
            .get(c.task)
            ?.prepared.meanwhile?.()
            .catch((err: unknown) => meanwhile.set(c.task, err)),
        ),
        ...cases.map((c) => settled(sent.get(c.task)?.id ?? '').catch(() => undefined)),
      ]);
      // Each outcome is read before the next phase acts on it (aggregate_records rolls up the charges,
      // destroy_llmhost removes what launch_llmhost applied).
      await Promise.all(
        cases.map(async (c) => {
          const s = sent.get(c.task);
          if (!s) return;
          const m = await meta(s.id);
          if (!m || !TERMINAL.includes(m.status)) {
            outcomes.set(c.task, { state: m?.status ?? 'no result', error: new Error(`${c.task} did not settle`) });
            return;
          }
          const error =
            meanwhile.get(c.task) ??
            (await s.prepared.check(m).then(
              () => null,
              (err: unknown) => err,
            ));
          outcomes.set(c.task, { state: m.status, error });
        }),
      );
    }
  }, 300_000);

  test('the cases cover exactly the names the binary declares, each sent to the queue it declares', () => {
    expect(declared.size).toBe(39);
    expect(new Set(CASES.map((c) => P + c.task))).toEqual(new Set(declared.keys()));
    expect(new Set(declared.values())).toEqual(new Set([OP, INFRA]));
  });

  test.each(CASES.map((c) => [c.task]))("%s: Smarter's outcome", async (task) => {
    const s = sent.get(task);
    if (!s) throw new Error(`${task} was not sent`);
    const o = outcomes.get(task);
    expect({ task, state: o?.state }).toEqual({ task, state: s.prepared.state });
    if (o?.error) throw o.error instanceof Error ? o.error : new Error(JSON.stringify(o.error));
  });

  test('every process is still running', () => everyProcessAlive());
});

// ---------------------------------------------------------------------------------------------------------------
// Bad input through the binary: every name, every kind of bad argument.

interface DeadLetter {
  id: string;
  task: string;
  reason: string;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : Buffer.isBuffer(v) ? v.toString('utf8') : '');

/** The dead letters of `queue`, read and put back (the channel closes without acking them). */
async function deadLetters(queue: string): Promise<DeadLetter[]> {
  const conn = await amqp.connect(w.brokerUrl);
  conn.on('error', () => undefined);
  const out: DeadLetter[] = [];
  try {
    const ch = await conn.createChannel();
    // A queue nothing was dead-lettered to does not exist: the get is refused with 404 and the channel closes.
    ch.on('error', () => undefined);
    for (;;) {
      const msg = await ch.get(queue, { noAck: false });
      if (msg === false) break;
      const headers = (msg.properties.headers ?? {}) as Record<string, unknown>;
      let body: { id?: unknown; task?: unknown } = {};
      try {
        body = JSON.parse(msg.content.toString('utf8')) as typeof body;
      } catch {
        // an undecodable body keeps its id in the properties
      }
      out.push({
        id: String(msg.properties.correlationId ?? headers.id ?? body.id ?? ''),
        task: text(headers.task) || text(body.task),
        reason: text(headers['x-dead-letter-reason']),
      });
    }
  } finally {
    await conn.close().catch(() => undefined);
  }
  return out;
}

const OVERSIZED = 'x'.repeat(200_000);

describe('bad arguments for each of the 39 names, through the shipped workers', () => {
  const messages: Array<{ key: string; task: string; label: string; id: string }> = [];
  const outcome = new Map<string, string>();
  let dead: DeadLetter[] = [];

  beforeAll(async () => {
    const batch: Send[] = [];
    for (const c of CASES) {
      const takesArguments = Boolean(
        sent.get(c.task)?.prepared.args?.length ?? Object.keys(sent.get(c.task)?.prepared.kwargs ?? {}).length,
      );
      const bad: Array<[string, Pick<Send, 'args' | 'kwargs'>]> = [
        // A task that takes no arguments is given one too many instead.
        takesArguments ? ['missing', { args: [], kwargs: {} }] : ['surplus positional', { args: [1, 2, 3] }],
        ['None', { args: [null] }],
        ['wrong type', { args: [{ nested: ['not', 'an', 'id'] }], kwargs: {} }],
        ['unknown id', { args: [987654321] }],
        ['oversized string', { args: [OVERSIZED] }],
        ['extra kwargs', { kwargs: { no_such_argument: true, attempt: 'many' } }],
      ];
      for (const [label, a] of bad) {
        batch.push({ key: `${c.task} / ${label}`, name: P + c.task, queue: contract().get(P + c.task) ?? '?', ...a });
      }
    }
    const ids = await python(batch);
    for (const b of batch) {
      messages.push({ key: b.key, task: b.name, label: b.key.split(' / ')[1] ?? '', id: ids[b.key] ?? '' });
    }
    const deadLetterQueues = [`${OP}.dead_letter`, `${INFRA}.dead_letter`];
    await waitFor(
      async () => {
        everyProcessAlive();
        dead = (await Promise.all(deadLetterQueues.map((q) => deadLetters(q).catch(() => [])))).flat();
        const deadIds = new Set(dead.map((d) => d.id));
        for (const m of messages) {
          if (outcome.has(m.id)) continue;
          const r = await meta(m.id);
          if (r && TERMINAL.includes(r.status)) outcome.set(m.id, r.status);
          else if (deadIds.has(m.id)) outcome.set(m.id, 'DEAD_LETTER');
        }
        return outcome.size === messages.length;
      },
      150_000,
      1000,
    ).catch(() => undefined);
  }, 240_000);

  test('every message settles: a stored result or a dead letter with its reason; none lost, none left unacknowledged', async () => {
    const counts: Record<string, number> = {};
    for (const m of messages) {
      const o = outcome.get(m.id) ?? 'UNSETTLED';
      counts[o] = (counts[o] ?? 0) + 1;
    }
    const deadIds = new Set(dead.map((d) => d.id));
    const settledCount = messages.length - (counts.UNSETTLED ?? 0);
    process.stdout.write(
      `bad input: ${messages.length} sent (${CASES.length} names × 6), ${settledCount} settled: ${JSON.stringify(counts)}; ` +
        `dead letters with a reason: ${dead.filter((d) => deadIds.has(d.id) && d.reason).length}\n`,
    );
    expect(messages).toHaveLength(CASES.length * 6);
    expect(messages.filter((m) => !outcome.has(m.id)).map((m) => m.key)).toEqual([]);
    const ours = new Set(messages.map((m) => m.id));
    expect(dead.filter((d) => ours.has(d.id) && d.reason === '')).toEqual([]);
    // Checks that reschedule themselves (a node group still scaling, a domain checked again) hold a message for
    // a moment; once they end, both queues are empty with nothing unacknowledged.
    const idle = (queues: Map<string, { messages: number; unacked: number }>) =>
      [OP, INFRA].map((q) => ({ q, ...queues.get(q) }));
    const quiet = [OP, INFRA].map((q) => ({ q, messages: 0, unacked: 0 }));
    let queues = await w.queues();
    await waitFor(
      async () => {
        queues = await w.queues();
        return JSON.stringify(idle(queues)) === JSON.stringify(quiet);
      },
      60_000,
      1000,
    ).catch(() => undefined);
    expect(idle(queues)).toEqual(quiet);
    for (const q of [`${OP}.dead_letter`, `${INFRA}.dead_letter`]) expect(queues.get(q)?.unacked ?? 0).toBe(0);
  });

  test('every process is still running and healthy', () => everyProcessAlive());
});
