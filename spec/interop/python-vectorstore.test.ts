/**
 * Debian's Python Celery (protocol 1) sends Smarter's vectorstore tasks by name, with Smarter's positional
 * argument shape, to our real workers (operational and infrastructure queues, as ADR-030 deploys them), which
 * load through the real Qdrant client into the Qdrant stand-in and embed through the embeddings stand-in; the
 * results come back to Python through the Redis result backend.
 */
import { nullLogger } from '../../lib/logger.js';
import { HttpEmbeddings } from '../../tasks/cloud/embeddings.js';
import { QdrantDatabases } from '../../tasks/cloud/vectordb.js';
import type { SmarterDeps } from '../../tasks/env/task-env.js';
import { chunkId } from '../../tasks/vectorstore/chunk-ids.js';
import { AMQP_URL, REDIS_URL, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';
import { insertRow } from '../support/django-rows.js';
import { type EmbeddingsStandIn, startEmbeddingsStandIn } from '../support/embeddings-standin.js';
import { FakeCloud } from '../support/fake-cloud.js';
import { type QdrantStandIn, startQdrantStandIn } from '../support/qdrant-standin.js';
import { fernetKey, insertSecret } from '../support/secrets.js';
import { type SmarterWorkers, startSmarterWorkers } from '../support/smarter-harness.js';
import { pythonJson } from '../support/python-script.js';

let t: TestDatabase;
let qdrant: QdrantStandIn;
let api: EmbeddingsStandIn;
let workers: SmarterWorkers;
let vectorstoreId: number;

async function python(
  mode: string,
  id = 0,
): Promise<{ id: string; result?: unknown; state?: string; type?: string; message?: string }> {
  return (await pythonJson('spec/interop/python/vectorstore_client.py', [
    AMQP_URL,
    REDIS_URL,
    workers.op.queue,
    workers.infra.queue,
    mode,
    String(id),
  ])) as {
    id: string;
    result?: unknown;
    state?: string;
    type?: string;
    message?: string;
  };
}

async function documentRow(content: string, status = 'pending', minutesAgo = 0): Promise<number> {
  const res = await t.db.execute(
    `INSERT INTO vectorstore_vectorstoredocument (vectorstore_id, name, source, content_type, content, sha256, size_bytes, metadata, status, status_message, chunk_count, created_at, updated_at)
     VALUES (?, 'manual.pdf', 'upload', '', ?, SHA2(?, 256), 0, '{}', ?, '', 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) - INTERVAL ? MINUTE)`,
    [vectorstoreId, content, `${content}${Math.random()}`, status, minutesAgo],
  );
  return res.insertId;
}

const docStatus = async (id: number) =>
  (await t.db.select('SELECT status, chunk_count FROM vectorstore_vectorstoredocument WHERE id = ?', [id]))[0];

beforeAll(async () => {
  t = await createTestDatabase('e2e_vs');
  qdrant = await startQdrantStandIn({ apiKey: 'qk' });
  api = await startEmbeddingsStandIn({ apiKey: 'sk-interop', dimension: 6 });
  const { profileId } = await seed(t.db);
  // the keys as Smarter stores them: Secrets of the ApiConnection and of the Provider, encrypted by Python's Fernet
  const key = fernetKey();
  const qdrantKey = await insertSecret(t.db, profileId, key, 'qk');
  await t.db.execute(
    "INSERT INTO connection_apiconnection (connectionbase_ptr_id, base_url, auth_method, api_key_id) VALUES (1, ?, 'token', ?)",
    [qdrant.url, qdrantKey],
  );
  const providerKey = await insertSecret(t.db, profileId, key, 'sk-interop');
  const provider = await insertRow(t.db, 'provider_provider', {
    name: 'embedder',
    user_profile_id: profileId,
    status: 'verified',
    base_url: api.url,
    api_key_id: providerKey,
  });
  vectorstoreId = await insertRow(t.db, 'vectorstore_vectorstoremeta', {
    name: 'handbook',
    user_profile_id: profileId,
    spec: '{"embeddings": {"chunkSize": 40, "chunkOverlap": 8}}',
    backend: 'qdrant',
    hosting: 'managed',
    connection_id: 1,
    dimension: 6,
    embeddings_provider_id: provider,
    embeddings_model: 'text-embedding-3-small',
    status: 'ready',
    index_name: 'handbook-3141',
    endpoint_url: qdrant.url,
    deployed_at: new Date().toISOString().replace('T', ' ').replace('Z', ''),
  });
  qdrant.collections.set('handbook-3141', {
    size: 6,
    distance: 'Cosine',
    points: new Map(),
    snapshots: [],
    payloadSchema: {},
  });
  const settings = {
    operationalQueue: uniqueName('op'),
    infrastructureQueue: uniqueName('infra'),
    maxRetries: 3,
    retryBackoff: true,
    fernetEncryptionKey: key,
  };
  const deps: SmarterDeps = {
    db: t.db,
    cloud: {
      ...new FakeCloud().deps,
      vectordb: new QdrantDatabases(nullLogger(), { timeoutSeconds: 10 }),
      embeddings: new HttpEmbeddings({ timeoutSeconds: 10 }, nullLogger()),
    },
  };
  const env = { CELERY_RESULT_BACKEND: REDIS_URL };
  workers = await startSmarterWorkers(settings, deps, { op: env, infra: env });
}, 120_000);

afterAll(async () => {
  await workers?.stop();
  await qdrant?.stop();
  await api?.stop();
  await t?.drop();
});

test('own wiring: Python sends load_vectorstore_document(pk): the document is split, embedded and loaded, and Python gets the chunk count', async () => {
  const id = await documentRow('The quick brown fox jumps over the lazy dog. '.repeat(4));
  const { result } = await python('load', id);
  expect(typeof result).toBe('number');
  expect(result).toBeGreaterThan(1);
  expect(await docStatus(id)).toMatchObject({ status: 'loaded', chunk_count: result });
  const stored = [...(qdrant.collections.get('handbook-3141')?.points.keys() ?? [])];
  expect(stored).toEqual(
    expect.arrayContaining([chunkId(vectorstoreId, id, 0), chunkId(vectorstoreId, id, Number(result) - 1)]),
  );
  expect(api.calls.every((c) => c.authorization === 'Bearer sk-interop')).toBe(true);
}, 120_000);

test('own wiring: Python sends load_vectorstore_document for a missing document: None, as Smarter returns', async () => {
  expect((await python('load', 99999999)).result).toBeNull();
}, 120_000);

test('own wiring: Python sends snapshot_vectorstore(pk) and delete_vectorstore_document(pk): a snapshot name, then True and no chunks left', async () => {
  const id = await documentRow('A document to be deleted again, with enough words for chunks.');
  await python('load', id);
  const snap = await python('snapshot', vectorstoreId);
  expect(String(snap.result)).toMatch(/^handbook-3141-\d+-[\d-]+\.snapshot$/);
  expect((await python('delete', id)).result).toBe(true);
  expect(await docStatus(id)).toBeUndefined();
  const left = [...(qdrant.collections.get('handbook-3141')?.points.values() ?? [])].filter(
    (p) => (p.payload.metadata as { document_id?: number }).document_id === id,
  );
  expect(left).toEqual([]);
}, 120_000);

test('own wiring: Python sends maintain_vectorstores(): our worker re-queues a lost document, which our operational worker then loads', async () => {
  const lost = await documentRow('This one lost its Celery task an hour ago.', 'pending', 60);
  const { result } = await python('maintain');
  expect((result as Record<string, { retry: number[] }>)['handbook (qdrant, managed)']?.retry).toEqual([lost]);
  await waitFor(async () => ((await docStatus(lost))?.status === 'loaded' ? true : undefined), 30_000);
}, 120_000);

test('own wiring: Python sends load_vectorstore_document("seven"): a FAILURE naming the argument, and the worker carries on', async () => {
  const out = await python('bad');
  expect(out.state).toBe('FAILURE');
  expect(out.message).toMatch(/document_id/);
  expect((await python('load', 99999999)).result).toBeNull();
}, 120_000);
