/**
 * What the vectorstore task tests (spec/integration/vectorstore.*-through-real-clients.test.ts) share: a test database
 * with Smarter's tables, the Qdrant, Pinecone and embeddings stand-ins, the Provider, ApiConnections and Secret most
 * vectorstores use, and before each test a profile, in-memory clouds and the tasks of its own; the rows a test needs
 * (vectorstores, documents) and readers of what the tasks wrote. The state is exported as live bindings: a test
 * reads the values its hooks set.
 */
import net from 'node:net';
import { nullLogger } from '../../lib/logger.js';
import { bindArguments } from '../../lib/registry/args.js';
import type { ApplyOptions, TaskContext } from '../../lib/registry/context.js';
import type { AnyTask } from '../../lib/registry/define-task.js';
import { HttpEmbeddings } from '../../tasks/cloud/embeddings.js';
import { SdkPineconeProjects } from '../../tasks/cloud/pinecone.js';
import type { CloudDeps } from '../../tasks/cloud/cloud-deps.js';
import { QdrantDatabases } from '../../tasks/cloud/vectordb.js';
import { type SmarterDeps, type TaskEnv, taskEnv } from '../../tasks/env/task-env.js';
import { NO_OVERRIDES, type VectorstoreOverrides } from '../../tasks/env/settings.js';
import { vectorstoreTasks } from '../../tasks/vectorstore/index.js';
import { type TestDatabase, createTestDatabase, seed } from './db.js';
import { insertRow } from './django-rows.js';
import { type EmbeddingsStandIn, startEmbeddingsStandIn } from './embeddings-standin.js';
import { FakeCloud } from './fake-cloud.js';
import { type PineconeStandIn, startPineconeStandIn } from './pinecone-standin.js';
import { type QdrantStandIn, startQdrantStandIn } from './qdrant-standin.js';
import { fernetKey, insertSecret } from './secrets.js';
import { testContext } from './task-context.js';

export const OP = 'default_celery_task_queue';
export const INFRA = 'infrastructure_celery_task_queue';
export const NS = 'smarter-platform-alpha';
export const DIM = 8;
export const KEY = fernetKey();
// Namespace `smarter-platform-alpha` and platform name `smarter`, as Smarter derives them from these settings.
export const envWith = (overrides: VectorstoreOverrides = NO_OVERRIDES, fernetEncryptionKey = KEY): TaskEnv =>
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
export let tasks = vectorstoreTasks(envWith());

export let t: TestDatabase;
export let profileId: number;
export let qdrant: QdrantStandIn;
export let api: EmbeddingsStandIn;
export let pinecone: PineconeStandIn;
export let fake: FakeCloud;
export let deps: SmarterDeps;
export let applied: { task: string; args: unknown[]; queue?: string }[];
export let seq = 0;
export let closedUrl: string;
/** The Provider, ApiConnections and Secret that most tests' vectorstores use. */
export let shared: {
  profileId: number;
  providerId: number;
  qdrantConnection: number;
  pineconeConnection: number;
  selfHostedSecret: number;
};

export const secret = (value: string) => insertSecret(t.db, shared.profileId, KEY, value);

/** An ApiConnection (`connection_apiconnection`) with its URL and, unless null, a Secret holding its key. */
export async function apiConnection(baseUrl: string, apiKey: string | null): Promise<number> {
  seq += 1;
  const keyId = apiKey === null ? null : await secret(apiKey);
  await t.db.execute(
    'INSERT INTO connection_apiconnection (connectionbase_ptr_id, base_url, auth_method, timeout, api_key_id) VALUES (?, ?, ?, 30, ?)',
    [seq, baseUrl, 'token', keyId],
  );
  return seq;
}

/** A Provider with its base URL (none: OpenAI's) and, unless null, a Secret holding its API key. */
export async function provider(baseUrl: string | null, apiKey: string | null): Promise<number> {
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

/** The database, stand-ins and shared rows of one test file, and each test's own profile, clouds and tasks. */
export function vectorstoreWorldForFile(): void {
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
}

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

export async function run(name: string, args: unknown[] = [], d: SmarterDeps = deps): Promise<unknown> {
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

export interface VsOptions {
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
export async function vectorstore(o: VsOptions = {}): Promise<{ id: number; name: string; collection: string }> {
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
export async function accountDigits(): Promise<string> {
  const [r] = await t.db.select(
    'SELECT a.account_number FROM account_userprofile p JOIN account_account a ON a.id = p.account_id WHERE p.id = ?',
    [profileId],
  );
  return String(r?.account_number).replace(/-/g, '');
}

/** A Pinecone index in the stand-in, created as Pinecone's console would. */
export async function pineconeIndex(name: string): Promise<void> {
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

export async function documentRow(
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

export const vsRow = async (id: number) =>
  (
    await t.db.select(
      'SELECT status, status_message, vector_count, stats, last_checked_at, last_snapshot_at, last_maintenance_at FROM vectorstore_vectorstoremeta WHERE id = ?',
      [id],
    )
  )[0];
export const docRow = async (id: number) =>
  (
    await t.db.select(
      'SELECT status, status_message, chunk_count, loaded_at FROM vectorstore_vectorstoredocument WHERE id = ?',
      [id],
    )
  )[0];
export const points = (collection: string) => [...(qdrant.collections.get(collection)?.points.values() ?? [])];
export const records = (index: string) => [...(pinecone.indexes.get(index)?.namespaces.get('')?.values() ?? [])];

/** Words, so the splitter has spaces to split at: `n` of them, about 6 characters each. */
export const words = (n: number, tag = 'w') =>
  Array.from({ length: n }, (_, i) => `${tag}${String(i).padStart(4, '0')}`).join(' ');

/** This test's tasks, made with settings of its own. */
export function useTasks(own: typeof tasks): void {
  tasks = own;
}
