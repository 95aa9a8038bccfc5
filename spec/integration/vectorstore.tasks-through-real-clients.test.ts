/**
 * Smarter's five vectorstore tasks on a real MariaDB with Smarter's tables, through the real Qdrant client
 * (@qdrant/js-client-rest) against the Qdrant stand-in, Pinecone's official client against the Pinecone
 * stand-in, and the real embeddings adapter (fetch) against the OpenAI-compatible stand-in; Kubernetes (a
 * self-hosted server's StatefulSet) from the in-memory FakeCloud. Every vectorstore's keys are its own, as
 * Smarter stores them: Fernet-encrypted Secrets of its ApiConnection, of its Provider, or generated for a
 * self-hosted server (smarter/apps/vectorstore/backends/qdrant.py, backends/pinecone.py, embeddings.py).
 */
import net from 'node:net';
import { nullLogger } from '../../lib/logger.js';
import { bindArguments } from '../../lib/registry/args.js';
import type { ApplyOptions, TaskContext } from '../../lib/registry/context.js';
import type { AnyTask } from '../../lib/registry/define-task.js';
import { HttpEmbeddings } from '../../tasks/cloud/embeddings.js';
import { SdkPineconeProjects } from '../../tasks/cloud/pinecone.js';
import { CloudError } from '../../tasks/cloud/errors.js';
import type { CloudDeps } from '../../tasks/cloud/cloud-deps.js';
import { QdrantDatabases } from '../../tasks/cloud/vectordb.js';
import { type SmarterDeps, type TaskEnv, taskEnv } from '../../tasks/env/task-env.js';
import { chunkId } from '../../tasks/vectorstore/chunk-ids.js';
import { NO_OVERRIDES, type VectorstoreOverrides } from '../../tasks/env/settings.js';
import { vectorstoreTasks } from '../../tasks/vectorstore/index.js';
import { deleteVectorstoreDocument } from '../../tasks/vectorstore/delete-vectorstore-document.js';
import { loadVectorstoreDocument } from '../../tasks/vectorstore/load-vectorstore-document.js';
import { maintainVectorstores } from '../../tasks/vectorstore/maintain-vectorstores.js';
import { reconcileVectorstores } from '../../tasks/vectorstore/reconcile-vectorstores.js';
import { snapshotVectorstore } from '../../tasks/vectorstore/snapshot-vectorstore.js';
import { SMARTER_CATALOG } from '../../tasks/catalog.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';
import { insertRow } from '../support/django-rows.js';
import { type EmbeddingsStandIn, startEmbeddingsStandIn, vectorOf } from '../support/embeddings-standin.js';
import { testCloud } from '../support/cloud.js';
import { FakeCloud } from '../support/fake-cloud.js';
import { type PineconeStandIn, startPineconeStandIn } from '../support/pinecone-standin.js';
import { type QdrantStandIn, startQdrantStandIn } from '../support/qdrant-standin.js';
import { fernetKey, insertSecret } from '../support/secrets.js';
import { testContext } from '../support/task-context.js';
import { nameOf } from '../support/task-names.js';

const OP = 'default_celery_task_queue';
const INFRA = 'infrastructure_celery_task_queue';
const NS = 'smarter-platform-alpha';
const DIM = 8;
const KEY = fernetKey();
// Namespace `smarter-platform-alpha` and platform name `smarter`, as Smarter derives them from these settings.
const envWith = (overrides: VectorstoreOverrides = NO_OVERRIDES, fernetEncryptionKey = KEY): TaskEnv =>
  taskEnv({
    operationalQueue: OP,
    infrastructureQueue: INFRA,
    maxRetries: 3,
    retryBackoff: true,
    environment: 'alpha',
    rootDomain: 'smarter.sh',
    fernetEncryptionKey,
    ...overrides,
  });
let tasks = vectorstoreTasks(envWith());

let t: TestDatabase;
let profileId: number;
let qdrant: QdrantStandIn;
let api: EmbeddingsStandIn;
let pinecone: PineconeStandIn;
let fake: FakeCloud;
let deps: SmarterDeps;
let applied: { task: string; args: unknown[]; queue?: string }[];
let seq = 0;
let closedUrl: string;
/** The Provider, ApiConnections and Secret that most tests' vectorstores use. */
let shared: {
  profileId: number;
  providerId: number;
  qdrantConnection: number;
  pineconeConnection: number;
  selfHostedSecret: number;
};

const secret = (value: string) => insertSecret(t.db, shared.profileId, KEY, value);

/** An ApiConnection (`connection_apiconnection`) with its URL and, unless null, a Secret holding its key. */
async function apiConnection(baseUrl: string, apiKey: string | null): Promise<number> {
  seq += 1;
  const keyId = apiKey === null ? null : await secret(apiKey);
  await t.db.execute(
    'INSERT INTO connection_apiconnection (connectionbase_ptr_id, base_url, auth_method, timeout, api_key_id) VALUES (?, ?, ?, 30, ?)',
    [seq, baseUrl, 'token', keyId],
  );
  return seq;
}

/** A Provider with its base URL (none: OpenAI's) and, unless null, a Secret holding its API key. */
async function provider(baseUrl: string | null, apiKey: string | null): Promise<number> {
  seq += 1;
  const keyId = apiKey === null ? null : await secret(apiKey);
  return insertRow(t.db, 'provider_provider', {
    name: `provider${seq}`,
    user_profile_id: shared.profileId,
    status: 'verified',
    base_url: baseUrl,
    api_key_id: keyId,
  });
}

beforeAll(async () => {
  t = await createTestDatabase('vs');
  qdrant = await startQdrantStandIn({ apiKey: 'qdrant-key' });
  api = await startEmbeddingsStandIn({ apiKey: 'sk-test-key-1234', dimension: DIM });
  pinecone = await startPineconeStandIn({ apiKey: 'pc-key' });
  // a port that was free a moment ago: connecting to it is refused
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedUrl = `http://127.0.0.1:${(probe.address() as net.AddressInfo).port}`;
  await new Promise((resolve) => probe.close(resolve));
  shared = {
    profileId: (await seed(t.db)).profileId,
    providerId: 0,
    qdrantConnection: 0,
    pineconeConnection: 0,
    selfHostedSecret: 0,
  };
  shared.providerId = await provider(api.url, 'sk-test-key-1234');
  shared.qdrantConnection = await apiConnection(qdrant.url, 'qdrant-key');
  shared.pineconeConnection = await apiConnection('https://api.pinecone.io', 'pc-key');
  shared.selfHostedSecret = await secret('qdrant-key');
}, 60_000);
afterAll(async () => {
  await qdrant.stop();
  await api.stop();
  await pinecone.stop();
  await t.drop();
});

function cloud(): CloudDeps {
  return {
    ...fake.deps,
    vectordb: new QdrantDatabases(nullLogger(), { timeoutSeconds: 5 }),
    pinecone: new SdkPineconeProjects(nullLogger(), {
      controllerUrl: pinecone.controllerUrl,
      timeoutSeconds: 5,
      maxRetries: 0,
      fetch: pinecone.fetch,
    }),
    embeddings: new HttpEmbeddings({ timeoutSeconds: 5 }, nullLogger()),
  };
}

beforeEach(async () => {
  ({ profileId } = await seed(t.db));
  // each test sees only its own vectorstores: the tasks walk every deployed or ready one in the database
  await t.db.execute("UPDATE vectorstore_vectorstoremeta SET status = 'stopped'");
  fake = new FakeCloud();
  deps = { db: t.db, cloud: cloud() };
  tasks = vectorstoreTasks(envWith());
  applied = [];
  api.calls.length = 0;
});

async function run(name: string, args: unknown[] = [], d: SmarterDeps = deps): Promise<unknown> {
  const task = tasks.find((x) => x.name === name) as AnyTask<SmarterDeps>;
  const ctx = {
    ...testContext(d, name),
    applyAsync: ((task: string, a: unknown[] = [], _kw?: Record<string, unknown>, o?: ApplyOptions) => {
      applied.push({ task, args: a, queue: o?.queue });
      return Promise.resolve(`id-${applied.length}`);
    }) as TaskContext<SmarterDeps>['applyAsync'],
  };
  return task.run(bindArguments(task, args, {}), ctx);
}

interface VsOptions {
  status?: string;
  backend?: string;
  hosting?: string;
  /** A managed database's ApiConnection (the shared one of its backend by default; null for none). */
  connection?: number | null;
  /** A self-hosted server's URL as Smarter's deploy records it, and its generated key's Secret. */
  endpoint?: string;
  apiKeySecret?: number | null;
  provider?: number | null;
  deployed?: boolean;
  deletionProtection?: boolean;
  spec?: Record<string, unknown>;
  lastSnapshotHoursAgo?: number;
  withCollection?: boolean;
  /** '' for none recorded: the backends then use `default_index_name()`, which names `collection`. */
  indexName?: string;
}

/** A vectorstore row, and (by default) its collection or index in the stand-in, as Smarter's deploy + reconcile leave them. */
async function vectorstore(o: VsOptions = {}): Promise<{ id: number; name: string; collection: string }> {
  seq += 1;
  const name = `kb${seq}`;
  const backend = o.backend ?? 'qdrant';
  const hosting = o.hosting ?? 'managed';
  const selfHosted = hosting === 'self_hosted';
  const collection =
    o.indexName === ''
      ? `${name}${selfHosted ? '' : `-${await accountDigits()}`}`
      : backend === 'pinecone'
        ? `kb${seq}-3141-${process.pid}`
        : `${name}-3141`;
  const connection = selfHosted
    ? null
    : o.connection === undefined
      ? backend === 'pinecone'
        ? shared.pineconeConnection
        : shared.qdrantConnection
      : o.connection;
  const apiKeySecret = selfHosted ? (o.apiKeySecret === undefined ? shared.selfHostedSecret : o.apiKeySecret) : null;
  const res = await t.db.execute(
    `INSERT INTO vectorstore_vectorstoremeta (name, description, version, annotations, user_profile_id, spec, backend, hosting, connection_id, is_active, dimension, metric,
       deletion_protection, embeddings_provider_id, embeddings_model, status, status_message, index_name, endpoint_url, api_key_secret_id, vector_count, stats, deployed_at,
       last_snapshot_at, created_at, updated_at)
     VALUES (?, '', '1.0.0', '[]', ?, ?, ?, ?, ?, 1, ?, 'cosine', ?, ?, 'text-embedding-3-small', ?, '', ?, ?, ?, 0, '{}', ${o.deployed === false ? 'NULL' : 'UTC_TIMESTAMP(6)'},
       ${o.lastSnapshotHoursAgo === undefined ? 'NULL' : `UTC_TIMESTAMP(6) - INTERVAL ${o.lastSnapshotHoursAgo * 60} MINUTE`}, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
    [
      name,
      profileId,
      JSON.stringify(o.spec ?? {}),
      backend,
      hosting,
      connection,
      DIM,
      o.deletionProtection ? 1 : 0,
      o.provider === undefined ? shared.providerId : o.provider,
      o.status ?? 'ready',
      o.indexName ?? collection,
      selfHosted ? (o.endpoint ?? qdrant.url) : '',
      apiKeySecret,
    ],
  );
  if (o.withCollection ?? (o.status ?? 'ready') === 'ready') {
    if (backend === 'pinecone') await pineconeIndex(collection);
    else {
      qdrant.collections.set(collection, {
        size: DIM,
        distance: 'Cosine',
        points: new Map(),
        snapshots: [],
        payloadSchema: {},
      });
    }
  }
  return { id: res.insertId, name, collection };
}

/** The digits of the test profile's account number (`3141-<n>`), which a managed default index name ends with. */
async function accountDigits(): Promise<string> {
  const [r] = await t.db.select(
    'SELECT a.account_number FROM account_userprofile p JOIN account_account a ON a.id = p.account_id WHERE p.id = ?',
    [profileId],
  );
  return String(r?.account_number).replace(/-/g, '');
}

/** A Pinecone index in the stand-in, created as Pinecone's console would. */
async function pineconeIndex(name: string): Promise<void> {
  await new SdkPineconeProjects(nullLogger(), {
    controllerUrl: pinecone.controllerUrl,
    timeoutSeconds: 5,
    fetch: pinecone.fetch,
  })
    .connect({ apiKey: 'pc-key' })
    .createIndex({
      name,
      dimension: DIM,
      metric: 'cosine',
      cloud: 'aws',
      region: 'us-east-1',
      deletionProtection: 'disabled',
      tags: {},
    });
}

async function documentRow(
  vectorstoreId: number,
  content: string,
  o: { status?: string; minutesAgo?: number; chunkCount?: number; name?: string } = {},
): Promise<number> {
  seq += 1;
  const res = await t.db.execute(
    `INSERT INTO vectorstore_vectorstoredocument (vectorstore_id, name, source, content_type, content, sha256, size_bytes, metadata, status, status_message, chunk_count, created_at, updated_at)
     VALUES (?, ?, 'upload', 'application/pdf', ?, SHA2(?, 256), 0, '{"team": "docs"}', ?, '', ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) - INTERVAL ? MINUTE)`,
    [
      vectorstoreId,
      o.name ?? `manual${seq}.pdf`,
      content,
      `${content}${seq}`,
      o.status ?? 'pending',
      o.chunkCount ?? 0,
      o.minutesAgo ?? 0,
    ],
  );
  return res.insertId;
}

const vsRow = async (id: number) =>
  (
    await t.db.select(
      'SELECT status, status_message, vector_count, stats, last_checked_at, last_snapshot_at, last_maintenance_at FROM vectorstore_vectorstoremeta WHERE id = ?',
      [id],
    )
  )[0];
const docRow = async (id: number) =>
  (
    await t.db.select(
      'SELECT status, status_message, chunk_count, loaded_at FROM vectorstore_vectorstoredocument WHERE id = ?',
      [id],
    )
  )[0];
const points = (collection: string) => [...(qdrant.collections.get(collection)?.points.values() ?? [])];
const records = (index: string) => [...(pinecone.indexes.get(index)?.namespaces.get('')?.values() ?? [])];

/** Words, so the splitter has spaces to split at: `n` of them, about 6 characters each. */
const words = (n: number, tag = 'w') =>
  Array.from({ length: n }, (_, i) => `${tag}${String(i).padStart(4, '0')}`).join(' ');

describe('own wiring: registry', () => {
  test("the five tasks answer under Smarter's names and queues, take their argument positionally, and none autoretries", () => {
    const by = (n: string) => tasks.find((x) => x.name === n);
    expect(tasks.map((x) => x.name).sort()).toEqual(
      [...SMARTER_CATALOG.keys()].filter((n) => n.startsWith('smarter.apps.vectorstore.')).sort(),
    );
    expect([by(nameOf(loadVectorstoreDocument))?.queue, by(nameOf(deleteVectorstoreDocument))?.queue]).toEqual([
      OP,
      OP,
    ]);
    expect([
      by(nameOf(snapshotVectorstore))?.queue,
      by(nameOf(reconcileVectorstores))?.queue,
      by(nameOf(maintainVectorstores))?.queue,
    ]).toEqual([INFRA, INFRA, INFRA]);
    expect(by(nameOf(loadVectorstoreDocument))?.argNames).toEqual(['document_id']);
    expect(by(nameOf(deleteVectorstoreDocument))?.argNames).toEqual(['document_id']);
    expect(by(nameOf(snapshotVectorstore))?.argNames).toEqual(['vectorstore_id']);
    for (const x of tasks) expect(x.retry?.autoretryFor).toBeUndefined();
  });

  test('a document id that is not an integer is a clear argument error, not a crash', () => {
    const load = tasks.find((x) => x.name === nameOf(loadVectorstoreDocument)) as AnyTask<SmarterDeps>;
    expect(() => bindArguments(load, ['seven'], {})).toThrow(/document_id/);
    expect(() => bindArguments(load, [], {})).toThrow(/document_id/);
  });
});

describe('own wiring: reconcile_vectorstores', () => {
  test('creates a missing collection (dimension, metric, document_id index) and records ready with its statistics', async () => {
    const v = await vectorstore({ status: 'provisioning', withCollection: false });
    const out = (await run(nameOf(reconcileVectorstores))) as Record<string, string>;
    expect(out[`${v.name} (qdrant, managed)`]).toBe('ready');
    const c = qdrant.collections.get(v.collection);
    expect(c).toMatchObject({ size: DIM, distance: 'Cosine' });
    expect(c?.payloadSchema).toEqual({ 'metadata.document_id': { data_type: 'integer', points: 0 } });
    const row = await vsRow(v.id);
    expect(row).toMatchObject({ status: 'ready', status_message: '', vector_count: '0' });
    expect(JSON.parse(String(row?.stats))).toEqual({
      vector_count: 0,
      status: 'green',
      segments_count: 2,
      indexed_vectors_count: 0,
    });
    expect(row?.last_checked_at).not.toBeNull();
  });

  test('a self-hosted server is provisioning until its StatefulSet has a ready replica, naming why, then ready', async () => {
    const v = await vectorstore({ status: 'provisioning', hosting: 'self_hosted', withCollection: false });
    const key = `${v.name} (qdrant, self_hosted)`;
    expect(((await run(nameOf(reconcileVectorstores))) as Record<string, string>)[key]).toBe('provisioning');
    expect(await vsRow(v.id)).toMatchObject({
      status: 'provisioning',
      status_message: 'The Qdrant server does not exist.',
    });

    const sts = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: `vectorstore-${v.id}`, namespace: NS },
      status: { readyReplicas: 0 },
    };
    await fake.deps.kube.apply(sts);
    await fake.deps.kube.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `vectorstore-${v.id}-0`,
        namespace: NS,
        labels: { 'smarter.sh/vectorstore': `vectorstore-${v.id}` },
      },
      status: {
        containerStatuses: [
          {
            state: {
              waiting: {
                reason: 'ImagePullBackOff',
                message: 'Back-off pulling image "qdrant/qdrant:v1.19.1-unprivileged"',
              },
            },
          },
        ],
      },
    });
    await run(nameOf(reconcileVectorstores));
    expect(await vsRow(v.id)).toMatchObject({
      status: 'provisioning',
      status_message: 'ImagePullBackOff: Back-off pulling image "qdrant/qdrant:v1.19.1-unprivileged"',
    });
    expect(qdrant.collections.has(v.collection)).toBe(false);

    await fake.deps.kube.apply({ ...sts, status: { readyReplicas: 1 } });
    expect(((await run(nameOf(reconcileVectorstores))) as Record<string, string>)[key]).toBe('ready');
    expect(qdrant.collections.has(v.collection)).toBe(true);
  });

  test('an unreachable server or a wrong API key is recorded as failed, naming the service, verb, collection and cause', async () => {
    const down = await vectorstore({
      status: 'ready',
      connection: await apiConnection(closedUrl, 'qdrant-key'),
      withCollection: false,
    });
    const keyed = await vectorstore({ status: 'ready', connection: await apiConnection(qdrant.url, 'wrong-key') });
    await run(nameOf(reconcileVectorstores));
    const a = await vsRow(down.id);
    expect(a?.status).toBe('failed');
    expect(a?.status_message).toMatch(
      new RegExp(`^vectordb get collection ${down.collection}: Unavailable: .*ECONNREFUSED`),
    );
    expect(await vsRow(keyed.id)).toMatchObject({
      status: 'failed',
      status_message: `vectordb get collection ${keyed.collection}: AccessDenied: Invalid API key or JWT`,
    });
    // failed, deployed vectorstores are reconciled again, and recover
    await t.db.execute('UPDATE vectorstore_vectorstoremeta SET connection_id = ? WHERE id = ?', [
      shared.qdrantConnection,
      keyed.id,
    ]);
    await run(nameOf(reconcileVectorstores));
    expect((await vsRow(keyed.id))?.status).toBe('ready');
  });

  test("a managed database without an ApiConnection URL is failed, in Smarter's words; an unknown backend too", async () => {
    const none = await vectorstore({ status: 'provisioning', connection: null, withCollection: false });
    const odd = await vectorstore({ status: 'provisioning', backend: 'weaviate', withCollection: false });
    const out = (await run(nameOf(reconcileVectorstores))) as Record<string, string>;
    expect(out[`${none.name} (qdrant, managed)`]).toBe('failed');
    expect(await vsRow(none.id)).toMatchObject({
      status: 'failed',
      status_message: `Vectorstore ${none.name} has no ApiConnection URL.`,
    });
    expect(await vsRow(odd.id)).toMatchObject({
      status: 'failed',
      status_message: 'Unsupported vectorstore backend: weaviate',
    });
  });

  test('a Pinecone index is created as Smarter creates it (serverless, its spec.pinecone, protection, tags), then ready with its statistics', async () => {
    const v = await vectorstore({
      backend: 'pinecone',
      status: 'provisioning',
      withCollection: false,
      deletionProtection: true,
      spec: { pinecone: { cloud: 'gcp', region: 'europe-west4' } },
    });
    const out = (await run(nameOf(reconcileVectorstores))) as Record<string, string>;
    expect(out[`${v.name} (pinecone, managed)`]).toBe('ready');
    expect(pinecone.indexes.get(v.collection)).toMatchObject({
      dimension: DIM,
      metric: 'cosine',
      cloud: 'gcp',
      region: 'europe-west4',
      deletionProtection: 'enabled',
      tags: { created_by: 'smarter', vectorstore: String(v.id) },
    });
    const row = await vsRow(v.id);
    expect(row).toMatchObject({ status: 'ready', status_message: '', vector_count: '0' });
    expect(JSON.parse(String(row?.stats))).toEqual({ vector_count: 0, dimension: DIM, index_fullness: 0 });
    expect(pinecone.keys.at(-1)).toBe('pc-key');
  });

  test('a Pinecone index still initializing keeps the vectorstore provisioning; no ApiConnection key is failed as Smarter words it', async () => {
    const v = await vectorstore({ backend: 'pinecone', status: 'provisioning', withCollection: true });
    const ix = pinecone.indexes.get(v.collection);
    if (ix) ix.status = { ready: false, state: 'Initializing' };
    const keyless = await vectorstore({
      backend: 'pinecone',
      status: 'provisioning',
      connection: await apiConnection('https://api.pinecone.io', null),
      withCollection: false,
    });
    await run(nameOf(reconcileVectorstores));
    expect(await vsRow(v.id)).toMatchObject({
      status: 'provisioning',
      status_message: 'Pinecone is initializing the index.',
    });
    expect(await vsRow(keyless.id)).toMatchObject({
      status: 'failed',
      status_message: `Pinecone is unreachable: Vectorstore ${keyless.name} has no ApiConnection with a Pinecone API key.`,
    });
    if (ix) ix.status = { ready: true, state: 'Ready' };
    await run(nameOf(reconcileVectorstores));
    expect((await vsRow(v.id))?.status).toBe('ready');
  });

  test('vectorstores never deployed, or stopped, are not reconciled', async () => {
    const never = await vectorstore({ status: 'failed', deployed: false });
    const stopped = await vectorstore({ status: 'stopped' });
    const out = (await run(nameOf(reconcileVectorstores))) as Record<string, string>;
    expect(Object.keys(out)).not.toContain(`${never.name} (qdrant, managed)`);
    expect(Object.keys(out)).not.toContain(`${stopped.name} (qdrant, managed)`);
    expect((await vsRow(never.id))?.last_checked_at).toBeNull();
  });
});

describe('own wiring: load_vectorstore_document', () => {
  test('splits page by page, embeds in batches, and loads chunks with deterministic ids, text and metadata', async () => {
    const v = await vectorstore({ spec: { embeddings: { chunkSize: 100, chunkOverlap: 20, batchSize: 2 } } });
    const id = await documentRow(v.id, `${words(20, 'a')}\f${words(10, 'b')}`, { name: 'guide.pdf' });
    const count = (await run(nameOf(loadVectorstoreDocument), [id])) as number;
    expect(count).toBeGreaterThan(2);
    expect(await docRow(id)).toMatchObject({ status: 'loaded', status_message: '', chunk_count: count });
    expect((await docRow(id))?.loaded_at).not.toBeNull();

    const stored = points(v.collection);
    expect(stored.map((p) => p.id).sort()).toEqual(
      Array.from({ length: count }, (_, i) => chunkId(v.id, id, i)).sort(),
    );
    const first = stored.find((p) => p.id === chunkId(v.id, id, 0));
    const text = String(first?.payload.page_content);
    expect(text.startsWith('a0000 a0001')).toBe(true);
    expect([...text].length).toBeLessThanOrEqual(100);
    expect(first?.vector).toEqual(vectorOf(text, DIM));
    expect(first?.payload.metadata).toEqual({
      team: 'docs',
      document_id: id,
      document: 'guide.pdf',
      source: 'upload',
      chunk: 0,
      page: 1,
    });
    const last = stored.find((p) => p.id === chunkId(v.id, id, count - 1));
    expect(last?.payload.metadata).toMatchObject({ page: 2, chunk: count - 1 });
    // overlap: the second chunk starts with words the first ended with
    const second = String(stored.find((p) => p.id === chunkId(v.id, id, 1))?.payload.page_content);
    expect(text.endsWith(second.split(' ')[0] ?? '?') || text.includes(second.split(' ')[0] ?? '?')).toBe(true);

    expect(api.calls.map((c) => c.input.length)).toEqual(
      Array.from({ length: Math.ceil(count / 2) }, (_, i) => Math.min(2, count - 2 * i)),
    );
    expect(api.calls[0]).toMatchObject({
      model: 'text-embedding-3-small',
      encodingFormat: 'float',
      authorization: 'Bearer sk-test-key-1234',
    });
    expect(api.calls[0]?.dimensions).toBeUndefined();
  });

  test('loading again with a larger chunkSize replaces the chunks and removes the ones beyond the new count', async () => {
    const v = await vectorstore({ spec: { embeddings: { chunkSize: 60, chunkOverlap: 10 } } });
    const id = await documentRow(v.id, words(40));
    const before = (await run(nameOf(loadVectorstoreDocument), [id])) as number;
    await t.db.execute('UPDATE vectorstore_vectorstoremeta SET spec = ? WHERE id = ?', [
      JSON.stringify({ embeddings: { chunkSize: 1000, chunkOverlap: 10 } }),
      v.id,
    ]);
    expect(await run(nameOf(loadVectorstoreDocument), [id])).toBe(1);
    expect(before).toBeGreaterThan(1);
    expect(points(v.collection).map((p) => p.id)).toEqual([chunkId(v.id, id, 0)]);
  });

  test("a chunkOverlap of 0 means the default 200, as Smarter's `or` reads it, which LangChain refuses for a smaller chunkSize", async () => {
    const v = await vectorstore({ spec: { embeddings: { chunkSize: 60, chunkOverlap: 0 } } });
    const id = await documentRow(v.id, words(40));
    expect(await run(nameOf(loadVectorstoreDocument), [id])).toBeNull();
    expect(await docRow(id)).toMatchObject({
      status: 'failed',
      status_message: 'Got a larger chunk overlap (200) than chunk size (60), should be smaller.',
    });
  });

  test('spec.embeddings.dimensions is sent to the embeddings API', async () => {
    const v = await vectorstore({ spec: { embeddings: { dimensions: DIM } } });
    await run(nameOf(loadVectorstoreDocument), [await documentRow(v.id, 'short text')]);
    expect(api.calls[0]?.dimensions).toBe(DIM);
  });

  test('a vectorstore that is not ready: None, the document stays pending, nothing is embedded', async () => {
    const v = await vectorstore({ status: 'provisioning', withCollection: true });
    const id = await documentRow(v.id, 'some text');
    expect(await run(nameOf(loadVectorstoreDocument), [id])).toBeNull();
    expect((await docRow(id))?.status).toBe('pending');
    expect(api.calls).toEqual([]);
  });

  test.each([
    [
      429,
      /^embeddings create embeddings http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings \(text-embedding-3-small\): Throttled: HTTP 429: Rate limit reached for text-embedding-3-small/,
    ],
    [401, /: AccessDenied: HTTP 401: Incorrect API key provided: sk-\*\*\*1234\./],
    [500, /: Unavailable: HTTP 500: The server had an error while processing your request\. Sorry about that!$/],
  ] as const)("an embeddings %i: None, and the document is failed with the API's words", async (status, message) => {
    const v = await vectorstore();
    const id = await documentRow(v.id, 'text to embed');
    api.failNext(status);
    expect(await run(nameOf(loadVectorstoreDocument), [id])).toBeNull();
    const d = await docRow(id);
    expect(d?.status).toBe('failed');
    expect(String(d?.status_message)).toMatch(message);
    expect(points(v.collection)).toEqual([]);
  });

  test('Qdrant failing the upsert fails the document, naming the collection and verb', async () => {
    const v = await vectorstore();
    const id = await documentRow(v.id, 'text');
    qdrant.failNext({ status: 500, path: /^PUT \/collections\/[^/]+\/points$/ });
    expect(await run(nameOf(loadVectorstoreDocument), [id])).toBeNull();
    expect(await docRow(id)).toMatchObject({
      status: 'failed',
      status_message: `vectordb upsert points ${v.collection}: Unavailable: Service internal error: injected by the stand-in`,
    });
  });

  test('a collection of another dimension is refused by Qdrant with its wording', async () => {
    const v = await vectorstore();
    qdrant.collections.set(v.collection, {
      size: 3,
      distance: 'Cosine',
      points: new Map(),
      snapshots: [],
      payloadSchema: {},
    });
    const id = await documentRow(v.id, 'text');
    expect(await run(nameOf(loadVectorstoreDocument), [id])).toBeNull();
    expect((await docRow(id))?.status_message).toBe(
      `vectordb upsert points ${v.collection}: Invalid: Wrong input: Vector dimension error: expected dim: 3, got ${DIM}`,
    );
  });

  test('no text, no such document: None, and the document says why', async () => {
    const v = await vectorstore();
    const empty = await documentRow(v.id, '  \f \n ', { name: 'blank.pdf' });
    expect(await run(nameOf(loadVectorstoreDocument), [empty])).toBeNull();
    expect(await docRow(empty)).toMatchObject({ status: 'failed', status_message: 'blank.pdf has no text to load.' });
    expect(await run(nameOf(loadVectorstoreDocument), [987654321])).toBeNull();
  });

  test("a Pinecone document: its chunks upserted to the index's default namespace with Smarter's ids, vectors and metadata (text in `text`)", async () => {
    const v = await vectorstore({
      backend: 'pinecone',
      spec: { embeddings: { chunkSize: 100, chunkOverlap: 20, batchSize: 2 } },
    });
    const id = await documentRow(v.id, `${words(20, 'p')}\f${words(5, 'q')}`, { name: 'pine.pdf' });
    const count = (await run(nameOf(loadVectorstoreDocument), [id])) as number;
    expect(count).toBeGreaterThan(2);
    expect(await docRow(id)).toMatchObject({ status: 'loaded', status_message: '', chunk_count: count });
    expect([...(pinecone.indexes.get(v.collection)?.namespaces.keys() ?? [])]).toEqual(['']);
    const stored = records(v.collection);
    expect(stored.map((r) => r.id).sort()).toEqual(
      Array.from({ length: count }, (_, i) => chunkId(v.id, id, i)).sort(),
    );
    const first = stored.find((r) => r.id === chunkId(v.id, id, 0));
    const text = String(first?.metadata?.text);
    expect(text.startsWith('p0000 p0001')).toBe(true);
    expect(first?.values).toEqual(vectorOf(text, DIM));
    expect(first?.metadata).toEqual({
      team: 'docs',
      document_id: id,
      document: 'pine.pdf',
      source: 'upload',
      chunk: 0,
      page: 1,
      text,
    });
    // one upsert per embedded batch, each with the ApiConnection's key; the Provider's key for the embeddings
    expect(pinecone.requests.filter((r) => r === `${v.collection}: POST /vectors/upsert`).length).toBe(
      Math.ceil(count / 2),
    );
    expect(api.calls.every((c) => c.authorization === 'Bearer sk-test-key-1234')).toBe(true);
    // loaded again with one chunk a page: the others are deleted by id
    await t.db.execute('UPDATE vectorstore_vectorstoremeta SET spec = ? WHERE id = ?', [
      JSON.stringify({ embeddings: { chunkSize: 1000, chunkOverlap: 10 } }),
      v.id,
    ]);
    expect(await run(nameOf(loadVectorstoreDocument), [id])).toBe(2);
    expect(
      records(v.collection)
        .map((r) => r.id)
        .sort(),
    ).toEqual([chunkId(v.id, id, 0), chunkId(v.id, id, 1)].sort());
  });

  test('Pinecone refusing a record (a null metadata value) fails the document with its words', async () => {
    const v = await vectorstore({ backend: 'pinecone' });
    const id = await documentRow(v.id, 'text');
    await t.db.execute('UPDATE vectorstore_vectorstoredocument SET metadata = \'{"owner": null}\' WHERE id = ?', [id]);
    expect(await run(nameOf(loadVectorstoreDocument), [id])).toBeNull();
    expect(await docRow(id)).toMatchObject({
      status: 'failed',
      status_message: `pinecone upsert vectors ${v.collection}: Invalid: Metadata value must be a string, number, boolean or list of strings, got 'null' for field 'owner'`,
    });
  });
});

// smarter/smarter/apps/vectorstore/backends/base.py: `index_name` is the recorded one or
// `VectorstoreMeta.default_index_name()` (smarter/smarter/apps/vectorstore/models/vectorstore_meta.py).
describe('own wiring: a vectorstore without an index_name uses default_index_name()', () => {
  test("Qdrant Cloud, through openCloud's own adapters: reconcile creates `<name>-<account digits>` and a document loads into it", async () => {
    const production = testCloud();
    const d: SmarterDeps = {
      db: t.db,
      cloud: { ...fake.deps, vectordb: production.vectordb, embeddings: production.embeddings },
    };
    const v = await vectorstore({ indexName: '', status: 'provisioning', withCollection: false });
    expect(v.collection).toMatch(/^kb\d+-3141\d+$/);
    await run(nameOf(reconcileVectorstores), [], d);
    expect(await vsRow(v.id)).toMatchObject({ status: 'ready', status_message: '' });
    expect(qdrant.collections.get(v.collection)?.size).toBe(DIM);
    expect(await run(nameOf(loadVectorstoreDocument), [await documentRow(v.id, 'no index name')], d)).toBe(1);
    expect(points(v.collection)).toHaveLength(1);
  });

  test('a self-hosted Qdrant: the name alone', async () => {
    const v = await vectorstore({ indexName: '', hosting: 'self_hosted' });
    expect(v.collection).toMatch(/^kb\d+$/);
    expect(await run(nameOf(loadVectorstoreDocument), [await documentRow(v.id, 'self hosted')])).toBe(1);
    expect(points(v.collection)).toHaveLength(1);
  });

  test('Pinecone: reconcile creates the index `<name>-<account digits>` and a document loads into it', async () => {
    const v = await vectorstore({ indexName: '', backend: 'pinecone', status: 'provisioning', withCollection: false });
    await run(nameOf(reconcileVectorstores));
    expect(await vsRow(v.id)).toMatchObject({ status: 'ready' });
    expect(pinecone.indexes.get(v.collection)?.dimension).toBe(DIM);
    expect(await run(nameOf(loadVectorstoreDocument), [await documentRow(v.id, 'pinecone')])).toBe(1);
    expect(records(v.collection)).toHaveLength(1);
  });
});

describe("own wiring: each vectorstore's own credentials", () => {
  const lastAccessed = async (id: number) =>
    (await t.db.select('SELECT last_accessed FROM secret_secret WHERE id = ?', [id]))[0]?.last_accessed;

  test('two self-hosted Qdrant servers, each with the key Smarter generated for it, and two Providers: each document goes to its own database with its key, embedded by its own Provider', async () => {
    const second = await startQdrantStandIn({ apiKey: 'generated-key-2' });
    const otherApi = await startEmbeddingsStandIn({ apiKey: 'sk-other-5678', dimension: DIM });
    try {
      const key1 = await secret('qdrant-key');
      const key2 = await secret('generated-key-2');
      const a = await vectorstore({ hosting: 'self_hosted', endpoint: qdrant.url, apiKeySecret: key1 });
      const b = await vectorstore({
        hosting: 'self_hosted',
        endpoint: second.url,
        apiKeySecret: key2,
        provider: await provider(otherApi.url, 'sk-other-5678'),
        withCollection: false,
      });
      second.collections.set(b.collection, {
        size: DIM,
        distance: 'Cosine',
        points: new Map(),
        snapshots: [],
        payloadSchema: {},
      });
      const da = await documentRow(a.id, 'first database');
      const db = await documentRow(b.id, 'second database');
      expect(await run(nameOf(loadVectorstoreDocument), [da])).toBe(1);
      expect(await run(nameOf(loadVectorstoreDocument), [db])).toBe(1);
      expect(points(a.collection).map((p) => p.id)).toEqual([chunkId(a.id, da, 0)]);
      expect([...(second.collections.get(b.collection)?.points.keys() ?? [])]).toEqual([chunkId(b.id, db, 0)]);
      expect(api.calls.map((c) => c.input)).toEqual([['first database']]);
      expect(otherApi.calls.map((c) => [c.input, c.authorization])).toEqual([
        [['second database'], 'Bearer sk-other-5678'],
      ]);
      // Secret.get_secret() moves last_accessed
      expect(await lastAccessed(key1)).not.toBeNull();
      expect(await lastAccessed(key2)).not.toBeNull();
    } finally {
      await second.stop();
      await otherApi.stop();
    }
  });

  test("a managed Qdrant is reached at its ApiConnection's base_url with its key; endpoint_url is not read", async () => {
    const v = await vectorstore();
    await t.db.execute('UPDATE vectorstore_vectorstoremeta SET endpoint_url = ? WHERE id = ?', [closedUrl, v.id]);
    expect(await run(nameOf(loadVectorstoreDocument), [await documentRow(v.id, 'managed')])).toBe(1);
    expect(points(v.collection)).toHaveLength(1);
  });

  test('a Provider without an API key or without a base URL, and a Secret the worker cannot decrypt, as Smarter words them', async () => {
    const keyless = await vectorstore({ provider: await provider(api.url, null) });
    const d1 = await documentRow(keyless.id, 'x');
    expect(await run(nameOf(loadVectorstoreDocument), [d1])).toBeNull();
    expect(await docRow(d1)).toMatchObject({
      status: 'failed',
      status_message: expect.stringMatching(/^Provider provider\d+ has no API key\.$/) as unknown,
    });
    const none = await vectorstore({ provider: null });
    const d2 = await documentRow(none.id, 'x');
    expect(await run(nameOf(loadVectorstoreDocument), [d2])).toBeNull();
    expect((await docRow(d2))?.status_message).toBe(`Vectorstore ${none.name} has no embeddings provider or model.`);
    // no base_url: OpenAI's API, which the loopback test cannot reach; the error names its URL
    const openai = await vectorstore({ provider: await provider(null, 'sk-test-key-1234') });
    const d3 = await documentRow(openai.id, 'x');
    expect(
      await run(nameOf(loadVectorstoreDocument), [d3], {
        db: t.db,
        cloud: {
          ...deps.cloud,
          embeddings: { embed: (endpoint) => Promise.reject(new Error(`would call ${endpoint.baseUrl}`)) },
        },
      }),
    ).toBeNull();
    expect((await docRow(d3))?.status_message).toBe('would call https://api.openai.com/v1');
    tasks = vectorstoreTasks(envWith(NO_OVERRIDES, ''));
    const d4 = await documentRow(keyless.id, 'x');
    await t.db.execute('UPDATE vectorstore_vectorstoremeta SET embeddings_provider_id = ? WHERE id = ?', [
      shared.providerId,
      keyless.id,
    ]);
    expect(await run(nameOf(loadVectorstoreDocument), [d4])).toBeNull();
    expect((await docRow(d4))?.status_message).toMatch(
      /^Secret secret\w+: Failed to decrypt the secret: FERNET_ENCRYPTION_KEY is not set on the worker$/,
    );
  });

  test("the operator's overrides, when set, replace the row's Qdrant key and the Provider's URL and key", async () => {
    const otherApi = await startEmbeddingsStandIn({ apiKey: 'sk-override-0000', dimension: DIM });
    try {
      tasks = vectorstoreTasks(
        envWith({ qdrantApiKey: 'qdrant-key', embeddingsUrl: otherApi.url, embeddingsApiKey: 'sk-override-0000' }),
      );
      const v = await vectorstore({
        connection: await apiConnection(qdrant.url, 'stale-key'),
        provider: await provider(closedUrl, null),
      });
      expect(await run(nameOf(loadVectorstoreDocument), [await documentRow(v.id, 'overridden')])).toBe(1);
      expect(otherApi.calls.map((c) => c.authorization)).toEqual(['Bearer sk-override-0000']);
      expect(points(v.collection)).toHaveLength(1);
    } finally {
      await otherApi.stop();
    }
  });
});

describe('own wiring: delete_vectorstore_document', () => {
  test("removes the document's chunks (only its own) and then its row; True", async () => {
    const v = await vectorstore({ spec: { embeddings: { chunkSize: 50, chunkOverlap: 5 } } });
    const gone = await documentRow(v.id, words(30, 'g'));
    const kept = await documentRow(v.id, words(10, 'k'));
    await run(nameOf(loadVectorstoreDocument), [gone]);
    await run(nameOf(loadVectorstoreDocument), [kept]);
    const keptCount = Number((await docRow(kept))?.chunk_count);
    expect(keptCount).toBeGreaterThan(0);
    expect(points(v.collection).length).toBeGreaterThan(keptCount);
    await t.db.execute("UPDATE vectorstore_vectorstoredocument SET status = 'deleting' WHERE id = ?", [gone]);
    expect(await run(nameOf(deleteVectorstoreDocument), [gone])).toBe(true);
    expect(await docRow(gone)).toBeUndefined();
    expect(points(v.collection).map((p) => (p.payload.metadata as { document_id: number }).document_id)).toEqual(
      Array(keptCount).fill(kept),
    );
  });

  test("a Pinecone document's chunks are deleted by their ids (only its own), then its row; True", async () => {
    const v = await vectorstore({ backend: 'pinecone', spec: { embeddings: { chunkSize: 50, chunkOverlap: 5 } } });
    const gone = await documentRow(v.id, words(30, 'g'));
    const kept = await documentRow(v.id, words(10, 'k'));
    await run(nameOf(loadVectorstoreDocument), [gone]);
    await run(nameOf(loadVectorstoreDocument), [kept]);
    const keptCount = Number((await docRow(kept))?.chunk_count);
    await t.db.execute("UPDATE vectorstore_vectorstoredocument SET status = 'deleting' WHERE id = ?", [gone]);
    expect(await run(nameOf(deleteVectorstoreDocument), [gone])).toBe(true);
    expect(await docRow(gone)).toBeUndefined();
    expect(records(v.collection).map((r) => r.metadata?.document_id)).toEqual(Array(keptCount).fill(kept));
    expect(pinecone.requests.filter((r) => r === `${v.collection}: POST /vectors/delete`)).toHaveLength(1);
  });

  test('no such document: False', async () => {
    expect(await run(nameOf(deleteVectorstoreDocument), [987654321])).toBe(false);
  });

  test('a vectorstore that is not ready: the row is deleted without calling Qdrant', async () => {
    const v = await vectorstore({ status: 'stopped', endpoint: closedUrl });
    const id = await documentRow(v.id, 'x', { status: 'deleting' });
    expect(await run(nameOf(deleteVectorstoreDocument), [id])).toBe(true);
    expect(await docRow(id)).toBeUndefined();
  });

  test("Qdrant failing is the task's failure (a CloudError naming verb and collection), and the row stays deleting", async () => {
    const v = await vectorstore();
    const id = await documentRow(v.id, 'x', { status: 'deleting' });
    qdrant.failNext({ status: 503, path: /points\/delete/, message: 'Service unavailable: shutting down' });
    const err = await run(nameOf(deleteVectorstoreDocument), [id]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudError);
    expect((err as Error).message).toBe(
      `vectordb delete points ${v.collection}: Unavailable: Service unavailable: shutting down`,
    );
    expect((await docRow(id))?.status).toBe('deleting');
  });
});

describe('own wiring: snapshot_vectorstore', () => {
  const snapshotRows = async (id: number) =>
    t.db.select(
      'SELECT name, status, status_message, size_bytes, vector_count, scheduled FROM vectorstore_vectorstoresnapshot WHERE vectorstore_id = ? ORDER BY created_at DESC, id DESC',
      [id],
    );

  async function olderSnapshot(
    v: { id: number; collection: string },
    name: string,
    hoursAgo: number,
    status = 'ready',
  ): Promise<void> {
    await t.db.execute(
      `INSERT INTO vectorstore_vectorstoresnapshot (vectorstore_id, name, status, status_message, scheduled, created_at, updated_at) VALUES (?, ?, ?, '', 1, UTC_TIMESTAMP(6) - INTERVAL ? HOUR, UTC_TIMESTAMP(6))`,
      [v.id, name, status, hoursAgo],
    );
    if (status !== 'failed') {
      qdrant.collections
        .get(v.collection)
        ?.snapshots.push({ name, creation_time: '2026-01-01T00:00:00', size: 10, checksum: 'x' });
    }
  }

  test("takes a snapshot named as Qdrant names it, records it, and prunes the oldest beyond the manifest's retention", async () => {
    const v = await vectorstore({ spec: { maintenance: { snapshotRetention: 2 } } });
    await olderSnapshot(v, 'old-3.snapshot', 30);
    await olderSnapshot(v, 'old-2.snapshot', 20);
    await olderSnapshot(v, 'old-1.snapshot', 10);
    await olderSnapshot(v, 'broken.snapshot', 5, 'failed');
    const name = String(await run(nameOf(snapshotVectorstore), [v.id]));
    expect(name).toMatch(new RegExp(`^${v.collection}-\\d+-\\d{4}-\\d\\d-\\d\\d-\\d\\d-\\d\\d-\\d\\d\\.snapshot$`));
    const kept = await snapshotRows(v.id);
    expect(kept.map((r) => r.name)).toEqual([name, 'old-1.snapshot']);
    expect(kept[0]).toMatchObject({ status: 'ready', status_message: '', scheduled: 0, vector_count: '0' });
    expect(Number(kept[0]?.size_bytes)).toBeGreaterThan(0);
    expect(
      qdrant.collections
        .get(v.collection)
        ?.snapshots.map((s) => s.name)
        .sort(),
    ).toEqual([name, 'old-1.snapshot'].sort());
    expect((await vsRow(v.id))?.last_snapshot_at).not.toBeNull();
  });

  test('the default retention is 7', async () => {
    const v = await vectorstore();
    for (let i = 9; i >= 1; i -= 1) await olderSnapshot(v, `s${i}.snapshot`, i);
    await run(nameOf(snapshotVectorstore), [v.id]);
    expect((await snapshotRows(v.id)).length).toBe(7);
    expect(qdrant.collections.get(v.collection)?.snapshots.length).toBe(7);
  });

  test('a snapshot Qdrant no longer has is skipped by the pruning, its row kept, the rest pruned', async () => {
    const v = await vectorstore({ spec: { maintenance: { snapshotRetention: 1 } } });
    await olderSnapshot(v, 'a.snapshot', 3);
    await t.db.execute(
      "INSERT INTO vectorstore_vectorstoresnapshot (vectorstore_id, name, status, status_message, scheduled, created_at, updated_at) VALUES (?, 'lost.snapshot', 'ready', '', 1, UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, UTC_TIMESTAMP(6))",
      [v.id],
    );
    qdrant.failNext({ status: 500, path: /DELETE .*lost\.snapshot/ });
    await run(nameOf(snapshotVectorstore), [v.id]);
    expect((await snapshotRows(v.id)).map((r) => r.name)).toContain('lost.snapshot');
    expect((await snapshotRows(v.id)).map((r) => r.name)).not.toContain('a.snapshot');
  });

  test('not ready is a VectorstoreServiceError; no such vectorstore is None; Qdrant failing marks the row failed', async () => {
    const p = await vectorstore({ status: 'provisioning' });
    await expect(run(nameOf(snapshotVectorstore), [p.id])).rejects.toMatchObject({
      pyType: 'VectorstoreServiceError',
      message: `Vectorstore ${p.name} is provisioning, not ready. Deploy it first.`,
    });
    expect(await run(nameOf(snapshotVectorstore), [987654321])).toBeNull();
    const v = await vectorstore();
    qdrant.failNext({
      status: 500,
      path: /POST .*\/snapshots/,
      message: 'Service internal error: No space left on device',
    });
    await expect(run(nameOf(snapshotVectorstore), [v.id])).rejects.toThrow(
      `vectordb create snapshot ${v.collection}: Unavailable: Service internal error: No space left on device`,
    );
    // the failed row is kept, saying why, until the next pruning removes it (as in Smarter)
    expect(await snapshotRows(v.id)).toMatchObject([
      {
        status: 'failed',
        status_message: `vectordb create snapshot ${v.collection}: Unavailable: Service internal error: No space left on device`,
      },
    ]);
    await run(nameOf(snapshotVectorstore), [v.id]);
    expect((await snapshotRows(v.id)).map((r) => r.status)).toEqual(['ready']);
  });
});

describe('own wiring: snapshot_vectorstore for Pinecone', () => {
  const snapshotRows = async (id: number) =>
    t.db.select(
      'SELECT name, status, status_message, size_bytes FROM vectorstore_vectorstoresnapshot WHERE vectorstore_id = ? ORDER BY created_at DESC, id DESC',
      [id],
    );

  test("a Pinecone backup: asked for with Smarter's name and description, recorded by its backup_id and size; creating until Pinecone says ready", async () => {
    const v = await vectorstore({ backend: 'pinecone' });
    const id = String(await run(nameOf(snapshotVectorstore), [v.id]));
    const backup = pinecone.backups.get(id);
    expect(backup?.name).toMatch(new RegExp(`^${v.collection}-\\d{8}-\\d{6}$`));
    expect(backup?.description).toBe('smarter backup');
    expect(await snapshotRows(v.id)).toMatchObject([
      { name: id, status: 'ready', status_message: '', size_bytes: String(backup?.size_bytes) },
    ]);
    pinecone.backupStatus = 'Initializing';
    try {
      const later = String(await run(nameOf(snapshotVectorstore), [v.id]));
      expect((await snapshotRows(v.id))[0]).toMatchObject({ name: later, status: 'creating' });
    } finally {
      pinecone.backupStatus = 'Ready';
    }
  });

  test("Pinecone refusing a backup (the Starter plan) fails the task in Smarter's words, and the row says why", async () => {
    const v = await vectorstore({ backend: 'pinecone' });
    pinecone.failNext({ status: 403, path: /backups/, message: 'Backups are not available on the Starter plan' });
    await expect(run(nameOf(snapshotVectorstore), [v.id])).rejects.toMatchObject({
      pyType: 'VectorStoreBackendError',
      message: `Pinecone did not back up ${v.collection}: pinecone create backup ${v.collection}: Invalid: Backups are not available on the Starter plan`,
    });
    expect(await snapshotRows(v.id)).toMatchObject([
      {
        status: 'failed',
        status_message: `Pinecone did not back up ${v.collection}: pinecone create backup ${v.collection}: Invalid: Backups are not available on the Starter plan`,
      },
    ]);
  });
});

describe('own wiring: maintain_vectorstores', () => {
  test('snapshots when due, prunes, and queues lost documents again: deleting → delete, pending/loading → load', async () => {
    const v = await vectorstore();
    const pending = await documentRow(v.id, 'a', { status: 'pending', minutesAgo: 31 });
    const loading = await documentRow(v.id, 'b', { status: 'loading', minutesAgo: 45 });
    const deleting = await documentRow(v.id, 'c', { status: 'deleting', minutesAgo: 60 });
    await documentRow(v.id, 'd', { status: 'pending', minutesAgo: 5 });
    await documentRow(v.id, 'e', { status: 'loaded', minutesAgo: 600 });
    const out = (await run(nameOf(maintainVectorstores))) as Record<
      string,
      { status: string; snapshot: string | null; pruned: number; retry: number[] }
    >;
    const entry = out[`${v.name} (qdrant, managed)`];
    expect(entry).toMatchObject({ status: 'ready', pruned: 0, retry: [pending, loading, deleting] });
    expect(entry?.snapshot).toMatch(new RegExp(`^${v.collection}-`));
    const [snap] = await t.db.select('SELECT scheduled FROM vectorstore_vectorstoresnapshot WHERE vectorstore_id = ?', [
      v.id,
    ]);
    expect(snap?.scheduled).toBe(1);
    expect(applied).toEqual([
      { task: nameOf(loadVectorstoreDocument), args: [pending], queue: OP },
      { task: nameOf(loadVectorstoreDocument), args: [loading], queue: OP },
      { task: nameOf(deleteVectorstoreDocument), args: [deleting], queue: OP },
    ]);
    expect((await vsRow(v.id))?.last_maintenance_at).not.toBeNull();
  });

  test('no snapshot before snapshotIntervalHours have passed, nor when snapshots are off', async () => {
    const recent = await vectorstore({ lastSnapshotHoursAgo: 23 });
    const off = await vectorstore({ spec: { maintenance: { snapshots: false } } });
    const due = await vectorstore({ lastSnapshotHoursAgo: 3, spec: { maintenance: { snapshotIntervalHours: 2 } } });
    const out = (await run(nameOf(maintainVectorstores))) as Record<string, { snapshot: string | null }>;
    expect(out[`${recent.name} (qdrant, managed)`]?.snapshot).toBeNull();
    expect(out[`${off.name} (qdrant, managed)`]?.snapshot).toBeNull();
    expect(out[`${due.name} (qdrant, managed)`]?.snapshot).toMatch(/\.snapshot$/);
  });

  test('a vectorstore that turns out unreachable is recorded failed and not snapshotted; the others are maintained', async () => {
    const down = await vectorstore({ connection: await apiConnection(closedUrl, 'qdrant-key') });
    const ok = await vectorstore();
    const out = (await run(nameOf(maintainVectorstores))) as Record<string, Record<string, unknown>>;
    expect(out[`${down.name} (qdrant, managed)`]).toMatchObject({ status: 'failed', snapshot: null, retry: [] });
    expect(out[`${ok.name} (qdrant, managed)`]).toMatchObject({ status: 'ready' });
  });

  test('a Pinecone vectorstore is maintained as Smarter does: reconciled, backed up when due, pruned, lost documents queued again', async () => {
    const v = await vectorstore({ backend: 'pinecone', spec: { maintenance: { snapshotRetention: 1 } } });
    const lost = await documentRow(v.id, 'lost', { status: 'pending', minutesAgo: 40 });
    const first = (await run(nameOf(maintainVectorstores))) as Record<
      string,
      { status: string; snapshot: string | null; pruned: number; retry: number[] }
    >;
    const entry = first[`${v.name} (pinecone, managed)`];
    expect(entry).toMatchObject({ status: 'ready', pruned: 0, retry: [lost] });
    expect(pinecone.backups.get(String(entry?.snapshot))).toMatchObject({
      source_index_name: v.collection,
      description: 'smarter backup',
    });
    expect(applied).toEqual([{ task: nameOf(loadVectorstoreDocument), args: [lost], queue: OP }]);
    await t.db.execute(
      'UPDATE vectorstore_vectorstoremeta SET last_snapshot_at = UTC_TIMESTAMP(6) - INTERVAL 25 HOUR WHERE id = ?',
      [v.id],
    );
    await t.db.execute(
      'UPDATE vectorstore_vectorstoresnapshot SET created_at = created_at - INTERVAL 1 HOUR WHERE vectorstore_id = ?',
      [v.id],
    );
    const second = (await run(nameOf(maintainVectorstores))) as Record<
      string,
      { snapshot: string | null; pruned: number }
    >;
    expect(second[`${v.name} (pinecone, managed)`]?.pruned).toBe(1);
    expect(pinecone.backups.has(String(entry?.snapshot))).toBe(false);
    expect(pinecone.backups.has(String(second[`${v.name} (pinecone, managed)`]?.snapshot))).toBe(true);
  });
});
