/**
 * Smarter's five vectorstore tasks on a real MariaDB with Smarter's tables, through the real Qdrant client
 * (@qdrant/js-client-rest) against the Qdrant stand-in, and the real embeddings adapter (fetch) against the
 * OpenAI-compatible stand-in; Kubernetes (a self-hosted server's StatefulSet) from the in-memory FakeCloud.
 */
import net from 'node:net';
import { nullLogger } from '../../lib/logger.js';
import { bindArguments } from '../../lib/registry/args.js';
import type { ApplyOptions, TaskContext } from '../../lib/registry/context.js';
import type { AnyTask } from '../../lib/registry/define-task.js';
import { HttpEmbeddings } from '../../tasks/cloud/embeddings.js';
import { CloudError, type CloudDeps } from '../../tasks/cloud/ports.js';
import { QdrantDatabases } from '../../tasks/cloud/vectordb.js';
import type { SmarterDeps } from '../../tasks/deps.js';
import { chunkId } from '../../tasks/vectorstore/chunk-ids.js';
import { vectorstoreTasks } from '../../tasks/vectorstore/index.js';
import { TASK } from '../../tasks/vectorstore/names.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';
import { type EmbeddingsStandIn, startEmbeddingsStandIn, vectorOf } from '../support/embeddings-standin.js';
import { FakeCloud } from '../support/fake-cloud.js';
import { type QdrantStandIn, startQdrantStandIn } from '../support/qdrant-standin.js';
import { testContext } from '../support/task-context.js';

const OP = 'default_celery_task_queue';
const INFRA = 'infrastructure_celery_task_queue';
const NS = 'smarter-platform-alpha';
const DIM = 8;
const tasks = vectorstoreTasks({ operationalQueue: OP, infrastructureQueue: INFRA, namespace: NS });

let t: TestDatabase;
let profileId: number;
let qdrant: QdrantStandIn;
let api: EmbeddingsStandIn;
let fake: FakeCloud;
let deps: SmarterDeps;
let applied: { task: string; args: unknown[]; queue?: string }[];
let seq = 0;
let closedUrl: string;

beforeAll(async () => {
  t = await createTestDatabase('vs');
  qdrant = await startQdrantStandIn({ apiKey: 'qdrant-key' });
  api = await startEmbeddingsStandIn({ apiKey: 'sk-test-key-1234', dimension: DIM });
  // a port that was free a moment ago: connecting to it is refused
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedUrl = `http://127.0.0.1:${(probe.address() as net.AddressInfo).port}`;
  await new Promise((resolve) => probe.close(resolve));
});
afterAll(async () => {
  await qdrant.stop();
  await api.stop();
  await t.drop();
});

function cloudWith(qdrantKey = 'qdrant-key', embeddingsKey = 'sk-test-key-1234'): CloudDeps {
  return {
    ...fake.deps,
    vectordb: new QdrantDatabases(nullLogger(), { apiKey: qdrantKey, timeoutSeconds: 5 }),
    embeddings: new HttpEmbeddings({ baseUrl: api.url, apiKey: embeddingsKey, timeoutSeconds: 5 }, nullLogger()),
  };
}

beforeEach(async () => {
  ({ profileId } = await seed(t.db));
  // each test sees only its own vectorstores: the tasks walk every deployed or ready one in the database
  await t.db.execute("UPDATE vectorstore_vectorstoremeta SET status = 'stopped'");
  fake = new FakeCloud();
  deps = { db: t.db, cloud: cloudWith() };
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
  endpoint?: string;
  deployed?: boolean;
  spec?: Record<string, unknown>;
  lastSnapshotHoursAgo?: number;
  withCollection?: boolean;
}

/** A vectorstore row, and (by default) its collection in the stand-in, as Smarter's deploy + reconcile leave them. */
async function vectorstore(o: VsOptions = {}): Promise<{ id: number; name: string; collection: string }> {
  seq += 1;
  const name = `kb${seq}`;
  const collection = `${name}-3141`;
  const res = await t.db.execute(
    `INSERT INTO vectorstore_vectorstoremeta (name, description, version, annotations, user_profile_id, spec, backend, hosting, is_active, dimension, metric,
       deletion_protection, embeddings_provider_id, embeddings_model, status, status_message, index_name, endpoint_url, vector_count, stats, deployed_at,
       last_snapshot_at, created_at, updated_at)
     VALUES (?, '', '1.0.0', '[]', ?, ?, ?, ?, 1, ?, 'cosine', 0, 1, 'text-embedding-3-small', ?, '', ?, ?, 0, '{}', ${o.deployed === false ? 'NULL' : 'UTC_TIMESTAMP(6)'},
       ${o.lastSnapshotHoursAgo === undefined ? 'NULL' : `UTC_TIMESTAMP(6) - INTERVAL ${o.lastSnapshotHoursAgo * 60} MINUTE`}, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
    [name, profileId, JSON.stringify(o.spec ?? {}), o.backend ?? 'qdrant', o.hosting ?? 'managed', DIM, o.status ?? 'ready', collection, o.endpoint ?? qdrant.url],
  );
  if (o.withCollection ?? (o.status ?? 'ready') === 'ready') {
    qdrant.collections.set(collection, { size: DIM, distance: 'Cosine', points: new Map(), snapshots: [], payloadSchema: {} });
  }
  return { id: res.insertId, name, collection };
}

async function documentRow(vectorstoreId: number, content: string, o: { status?: string; minutesAgo?: number; chunkCount?: number; name?: string } = {}): Promise<number> {
  seq += 1;
  const res = await t.db.execute(
    `INSERT INTO vectorstore_vectorstoredocument (vectorstore_id, name, source, content_type, content, sha256, size_bytes, metadata, status, status_message, chunk_count, created_at, updated_at)
     VALUES (?, ?, 'upload', 'application/pdf', ?, SHA2(?, 256), 0, '{"team": "docs"}', ?, '', ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) - INTERVAL ? MINUTE)`,
    [vectorstoreId, o.name ?? `manual${seq}.pdf`, content, `${content}${seq}`, o.status ?? 'pending', o.chunkCount ?? 0, o.minutesAgo ?? 0],
  );
  return res.insertId;
}

const vsRow = async (id: number) => (await t.db.select('SELECT status, status_message, vector_count, stats, last_checked_at, last_snapshot_at, last_maintenance_at FROM vectorstore_vectorstoremeta WHERE id = ?', [id]))[0];
const docRow = async (id: number) => (await t.db.select('SELECT status, status_message, chunk_count, loaded_at FROM vectorstore_vectorstoredocument WHERE id = ?', [id]))[0];
const points = (collection: string) => [...(qdrant.collections.get(collection)?.points.values() ?? [])];

/** Words, so the splitter has spaces to split at: `n` of them, about 6 characters each. */
const words = (n: number, tag = 'w') => Array.from({ length: n }, (_, i) => `${tag}${String(i).padStart(4, '0')}`).join(' ');

describe('registry', () => {
  test("the five tasks answer under Smarter's names and queues, take their argument positionally, and none autoretries", () => {
    const by = (n: string) => tasks.find((x) => x.name === n);
    expect(tasks.map((x) => x.name).sort()).toEqual(Object.values(TASK).sort());
    expect([by(TASK.loadDocument)?.queue, by(TASK.deleteDocument)?.queue]).toEqual([OP, OP]);
    expect([by(TASK.snapshot)?.queue, by(TASK.reconcile)?.queue, by(TASK.maintain)?.queue]).toEqual([INFRA, INFRA, INFRA]);
    expect(by(TASK.loadDocument)?.argNames).toEqual(['document_id']);
    expect(by(TASK.deleteDocument)?.argNames).toEqual(['document_id']);
    expect(by(TASK.snapshot)?.argNames).toEqual(['vectorstore_id']);
    for (const x of tasks) expect(x.retry?.autoretryFor).toBeUndefined();
  });

  test('a document id that is not an integer is a clear argument error, not a crash', () => {
    const load = tasks.find((x) => x.name === TASK.loadDocument) as AnyTask<SmarterDeps>;
    expect(() => bindArguments(load, ['seven'], {})).toThrow(/document_id/);
    expect(() => bindArguments(load, [], {})).toThrow(/document_id/);
  });
});

describe('reconcile_vectorstores', () => {
  test('creates a missing collection (dimension, metric, document_id index) and records ready with its statistics', async () => {
    const v = await vectorstore({ status: 'provisioning', withCollection: false });
    const out = (await run(TASK.reconcile)) as Record<string, string>;
    expect(out[`${v.name} (qdrant, managed)`]).toBe('ready');
    const c = qdrant.collections.get(v.collection);
    expect(c).toMatchObject({ size: DIM, distance: 'Cosine' });
    expect(c?.payloadSchema).toEqual({ 'metadata.document_id': { data_type: 'integer', points: 0 } });
    const row = await vsRow(v.id);
    expect(row).toMatchObject({ status: 'ready', status_message: '', vector_count: '0' });
    expect(JSON.parse(String(row?.stats))).toEqual({ vector_count: 0, status: 'green', segments_count: 2, indexed_vectors_count: 0 });
    expect(row?.last_checked_at).not.toBeNull();
  });

  test('a self-hosted server is provisioning until its StatefulSet has a ready replica, naming why, then ready', async () => {
    const v = await vectorstore({ status: 'provisioning', hosting: 'self_hosted', withCollection: false });
    const key = `${v.name} (qdrant, self_hosted)`;
    expect(((await run(TASK.reconcile)) as Record<string, string>)[key]).toBe('provisioning');
    expect(await vsRow(v.id)).toMatchObject({ status: 'provisioning', status_message: 'The Qdrant server does not exist.' });

    const sts = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: `vectorstore-${v.id}`, namespace: NS }, status: { readyReplicas: 0 } };
    await fake.deps.kube.apply(sts);
    await fake.deps.kube.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `vectorstore-${v.id}-0`, namespace: NS, labels: { 'smarter.sh/vectorstore': `vectorstore-${v.id}` } },
      status: { containerStatuses: [{ state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "qdrant/qdrant:v1.19.1-unprivileged"' } } }] },
    });
    await run(TASK.reconcile);
    expect(await vsRow(v.id)).toMatchObject({ status: 'provisioning', status_message: 'ImagePullBackOff: Back-off pulling image "qdrant/qdrant:v1.19.1-unprivileged"' });
    expect(qdrant.collections.has(v.collection)).toBe(false);

    await fake.deps.kube.apply({ ...sts, status: { readyReplicas: 1 } });
    expect(((await run(TASK.reconcile)) as Record<string, string>)[key]).toBe('ready');
    expect(qdrant.collections.has(v.collection)).toBe(true);
  });

  test('an unreachable server or a wrong API key is recorded as failed, naming the service, verb, collection and cause', async () => {
    const down = await vectorstore({ status: 'ready', endpoint: closedUrl, withCollection: false });
    const keyed = await vectorstore({ status: 'ready' });
    await run(TASK.reconcile, [], { db: t.db, cloud: cloudWith('wrong-key') });
    const a = await vsRow(down.id);
    expect(a?.status).toBe('failed');
    expect(a?.status_message).toMatch(new RegExp(`^vectordb get collection ${down.collection}: Unavailable: .*ECONNREFUSED`));
    expect(await vsRow(keyed.id)).toMatchObject({ status: 'failed', status_message: `vectordb get collection ${keyed.collection}: AccessDenied: Invalid API key or JWT` });
    // failed, deployed vectorstores are reconciled again, and recover
    await run(TASK.reconcile);
    expect((await vsRow(keyed.id))?.status).toBe('ready');
  });

  test('a Pinecone vectorstore is not touched, and its entry says this worker does not implement Pinecone', async () => {
    const v = await vectorstore({ backend: 'pinecone', status: 'provisioning', withCollection: false });
    const out = (await run(TASK.reconcile)) as Record<string, string>;
    expect(out[`${v.name} (pinecone, managed)`]).toMatch(/^provisioning: not reconciled: .*"pinecone", which smarter-worker does not implement/);
    expect(await vsRow(v.id)).toMatchObject({ status: 'provisioning', last_checked_at: null });
  });

  test('vectorstores never deployed, or stopped, are not reconciled', async () => {
    const never = await vectorstore({ status: 'failed', deployed: false });
    const stopped = await vectorstore({ status: 'stopped' });
    const out = (await run(TASK.reconcile)) as Record<string, string>;
    expect(Object.keys(out)).not.toContain(`${never.name} (qdrant, managed)`);
    expect(Object.keys(out)).not.toContain(`${stopped.name} (qdrant, managed)`);
    expect((await vsRow(never.id))?.last_checked_at).toBeNull();
  });
});

describe('load_vectorstore_document', () => {
  test('splits page by page, embeds in batches, and loads chunks with deterministic ids, text and metadata', async () => {
    const v = await vectorstore({ spec: { embeddings: { chunkSize: 100, chunkOverlap: 20, batchSize: 2 } } });
    const id = await documentRow(v.id, `${words(20, 'a')}\f${words(10, 'b')}`, { name: 'guide.pdf' });
    const count = (await run(TASK.loadDocument, [id])) as number;
    expect(count).toBeGreaterThan(2);
    expect(await docRow(id)).toMatchObject({ status: 'loaded', status_message: '', chunk_count: count });
    expect((await docRow(id))?.loaded_at).not.toBeNull();

    const stored = points(v.collection);
    expect(stored.map((p) => p.id).sort()).toEqual(Array.from({ length: count }, (_, i) => chunkId(v.id, id, i)).sort());
    const first = stored.find((p) => p.id === chunkId(v.id, id, 0));
    const text = String(first?.payload.page_content);
    expect(text.startsWith('a0000 a0001')).toBe(true);
    expect([...text].length).toBeLessThanOrEqual(100);
    expect(first?.vector).toEqual(vectorOf(text, DIM));
    expect(first?.payload.metadata).toEqual({ team: 'docs', document_id: id, document: 'guide.pdf', source: 'upload', chunk: 0, page: 1 });
    const last = stored.find((p) => p.id === chunkId(v.id, id, count - 1));
    expect(last?.payload.metadata).toMatchObject({ page: 2, chunk: count - 1 });
    // overlap: the second chunk starts with words the first ended with
    const second = String(stored.find((p) => p.id === chunkId(v.id, id, 1))?.payload.page_content);
    expect(text.endsWith(second.split(' ')[0] ?? '?') || text.includes(second.split(' ')[0] ?? '?')).toBe(true);

    expect(api.calls.map((c) => c.input.length)).toEqual(Array.from({ length: Math.ceil(count / 2) }, (_, i) => Math.min(2, count - 2 * i)));
    expect(api.calls[0]).toMatchObject({ model: 'text-embedding-3-small', encodingFormat: 'float', authorization: 'Bearer sk-test-key-1234' });
    expect(api.calls[0]?.dimensions).toBeUndefined();
  });

  test('loading again with a larger chunkSize replaces the chunks and removes the ones beyond the new count', async () => {
    const v = await vectorstore({ spec: { embeddings: { chunkSize: 60, chunkOverlap: 10 } } });
    const id = await documentRow(v.id, words(40));
    const before = (await run(TASK.loadDocument, [id])) as number;
    await t.db.execute('UPDATE vectorstore_vectorstoremeta SET spec = ? WHERE id = ?', [JSON.stringify({ embeddings: { chunkSize: 1000, chunkOverlap: 10 } }), v.id]);
    expect(await run(TASK.loadDocument, [id])).toBe(1);
    expect(before).toBeGreaterThan(1);
    expect(points(v.collection).map((p) => p.id)).toEqual([chunkId(v.id, id, 0)]);
  });

  test("a chunkOverlap of 0 means the default 200, as Smarter's `or` reads it, which LangChain refuses for a smaller chunkSize", async () => {
    const v = await vectorstore({ spec: { embeddings: { chunkSize: 60, chunkOverlap: 0 } } });
    const id = await documentRow(v.id, words(40));
    expect(await run(TASK.loadDocument, [id])).toBeNull();
    expect(await docRow(id)).toMatchObject({ status: 'failed', status_message: 'Got a larger chunk overlap (200) than chunk size (60), should be smaller.' });
  });

  test('spec.embeddings.dimensions is sent to the embeddings API', async () => {
    const v = await vectorstore({ spec: { embeddings: { dimensions: DIM } } });
    await run(TASK.loadDocument, [await documentRow(v.id, 'short text')]);
    expect(api.calls[0]?.dimensions).toBe(DIM);
  });

  test('a vectorstore that is not ready: None, the document stays pending, nothing is embedded', async () => {
    const v = await vectorstore({ status: 'provisioning', withCollection: true });
    const id = await documentRow(v.id, 'some text');
    expect(await run(TASK.loadDocument, [id])).toBeNull();
    expect((await docRow(id))?.status).toBe('pending');
    expect(api.calls).toEqual([]);
  });

  test.each([
    [429, /^embeddings create embeddings http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings \(text-embedding-3-small\): Throttled: HTTP 429: Rate limit reached for text-embedding-3-small/],
    [401, /: AccessDenied: HTTP 401: Incorrect API key provided: sk-\*\*\*1234\./],
    [500, /: Unavailable: HTTP 500: The server had an error while processing your request\. Sorry about that!$/],
  ] as const)('an embeddings %i: None, and the document is failed with the API\'s words', async (status, message) => {
    const v = await vectorstore();
    const id = await documentRow(v.id, 'text to embed');
    api.failNext(status);
    expect(await run(TASK.loadDocument, [id])).toBeNull();
    const d = await docRow(id);
    expect(d?.status).toBe('failed');
    expect(String(d?.status_message)).toMatch(message);
    expect(points(v.collection)).toEqual([]);
  });

  test('Qdrant failing the upsert fails the document, naming the collection and verb', async () => {
    const v = await vectorstore();
    const id = await documentRow(v.id, 'text');
    qdrant.failNext({ status: 500, path: /^PUT \/collections\/[^/]+\/points$/ });
    expect(await run(TASK.loadDocument, [id])).toBeNull();
    expect(await docRow(id)).toMatchObject({ status: 'failed', status_message: `vectordb upsert points ${v.collection}: Unavailable: Service internal error: injected by the stand-in` });
  });

  test('a collection of another dimension is refused by Qdrant with its wording', async () => {
    const v = await vectorstore();
    qdrant.collections.set(v.collection, { size: 3, distance: 'Cosine', points: new Map(), snapshots: [], payloadSchema: {} });
    const id = await documentRow(v.id, 'text');
    expect(await run(TASK.loadDocument, [id])).toBeNull();
    expect((await docRow(id))?.status_message).toBe(`vectordb upsert points ${v.collection}: Invalid: Wrong input: Vector dimension error: expected dim: 3, got ${DIM}`);
  });

  test('no text, no such document, a Pinecone vectorstore: None, and the document says why', async () => {
    const v = await vectorstore();
    const empty = await documentRow(v.id, '  \f \n ', { name: 'blank.pdf' });
    expect(await run(TASK.loadDocument, [empty])).toBeNull();
    expect(await docRow(empty)).toMatchObject({ status: 'failed', status_message: 'blank.pdf has no text to load.' });
    expect(await run(TASK.loadDocument, [987654321])).toBeNull();
    const p = await vectorstore({ backend: 'pinecone', withCollection: false });
    const pd = await documentRow(p.id, 'text');
    expect(await run(TASK.loadDocument, [pd])).toBeNull();
    expect(String((await docRow(pd))?.status_message)).toMatch(/uses backend "pinecone", which smarter-worker does not implement/);
  });
});

describe('delete_vectorstore_document', () => {
  test("removes the document's chunks (only its own) and then its row; True", async () => {
    const v = await vectorstore({ spec: { embeddings: { chunkSize: 50, chunkOverlap: 5 } } });
    const gone = await documentRow(v.id, words(30, 'g'));
    const kept = await documentRow(v.id, words(10, 'k'));
    await run(TASK.loadDocument, [gone]);
    await run(TASK.loadDocument, [kept]);
    const keptCount = Number((await docRow(kept))?.chunk_count);
    expect(keptCount).toBeGreaterThan(0);
    expect(points(v.collection).length).toBeGreaterThan(keptCount);
    await t.db.execute("UPDATE vectorstore_vectorstoredocument SET status = 'deleting' WHERE id = ?", [gone]);
    expect(await run(TASK.deleteDocument, [gone])).toBe(true);
    expect(await docRow(gone)).toBeUndefined();
    expect(points(v.collection).map((p) => (p.payload.metadata as { document_id: number }).document_id)).toEqual(Array(keptCount).fill(kept));
  });

  test('no such document: False', async () => {
    expect(await run(TASK.deleteDocument, [987654321])).toBe(false);
  });

  test('a vectorstore that is not ready: the row is deleted without calling Qdrant', async () => {
    const v = await vectorstore({ status: 'stopped', endpoint: closedUrl });
    const id = await documentRow(v.id, 'x', { status: 'deleting' });
    expect(await run(TASK.deleteDocument, [id])).toBe(true);
    expect(await docRow(id)).toBeUndefined();
  });

  test('Qdrant failing is the task\'s failure (a CloudError naming verb and collection), and the row stays deleting', async () => {
    const v = await vectorstore();
    const id = await documentRow(v.id, 'x', { status: 'deleting' });
    qdrant.failNext({ status: 503, path: /points\/delete/, message: 'Service unavailable: shutting down' });
    const err = await run(TASK.deleteDocument, [id]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudError);
    expect((err as Error).message).toBe(`vectordb delete points ${v.collection}: Unavailable: Service unavailable: shutting down`);
    expect((await docRow(id))?.status).toBe('deleting');
  });
});

describe('snapshot_vectorstore', () => {
  const snapshotRows = async (id: number) => t.db.select('SELECT name, status, status_message, size_bytes, vector_count, scheduled FROM vectorstore_vectorstoresnapshot WHERE vectorstore_id = ? ORDER BY created_at DESC, id DESC', [id]);

  async function olderSnapshot(v: { id: number; collection: string }, name: string, hoursAgo: number, status = 'ready'): Promise<void> {
    await t.db.execute(
      `INSERT INTO vectorstore_vectorstoresnapshot (vectorstore_id, name, status, status_message, scheduled, created_at, updated_at) VALUES (?, ?, ?, '', 1, UTC_TIMESTAMP(6) - INTERVAL ? HOUR, UTC_TIMESTAMP(6))`,
      [v.id, name, status, hoursAgo],
    );
    if (status !== 'failed') qdrant.collections.get(v.collection)?.snapshots.push({ name, creation_time: '2026-01-01T00:00:00', size: 10, checksum: 'x' });
  }

  test("takes a snapshot named as Qdrant names it, records it, and prunes the oldest beyond the manifest's retention", async () => {
    const v = await vectorstore({ spec: { maintenance: { snapshotRetention: 2 } } });
    await olderSnapshot(v, 'old-3.snapshot', 30);
    await olderSnapshot(v, 'old-2.snapshot', 20);
    await olderSnapshot(v, 'old-1.snapshot', 10);
    await olderSnapshot(v, 'broken.snapshot', 5, 'failed');
    const name = String(await run(TASK.snapshot, [v.id]));
    expect(name).toMatch(new RegExp(`^${v.collection}-\\d+-\\d{4}-\\d\\d-\\d\\d-\\d\\d-\\d\\d-\\d\\d\\.snapshot$`));
    const kept = await snapshotRows(v.id);
    expect(kept.map((r) => r.name)).toEqual([name, 'old-1.snapshot']);
    expect(kept[0]).toMatchObject({ status: 'ready', status_message: '', scheduled: 0, vector_count: '0' });
    expect(Number(kept[0]?.size_bytes)).toBeGreaterThan(0);
    expect(qdrant.collections.get(v.collection)?.snapshots.map((s) => s.name).sort()).toEqual([name, 'old-1.snapshot'].sort());
    expect((await vsRow(v.id))?.last_snapshot_at).not.toBeNull();
  });

  test('the default retention is 7', async () => {
    const v = await vectorstore();
    for (let i = 9; i >= 1; i -= 1) await olderSnapshot(v, `s${i}.snapshot`, i);
    await run(TASK.snapshot, [v.id]);
    expect((await snapshotRows(v.id)).length).toBe(7);
    expect(qdrant.collections.get(v.collection)?.snapshots.length).toBe(7);
  });

  test('a snapshot Qdrant no longer has is skipped by the pruning, its row kept, the rest pruned', async () => {
    const v = await vectorstore({ spec: { maintenance: { snapshotRetention: 1 } } });
    await olderSnapshot(v, 'a.snapshot', 3);
    await t.db.execute("INSERT INTO vectorstore_vectorstoresnapshot (vectorstore_id, name, status, status_message, scheduled, created_at, updated_at) VALUES (?, 'lost.snapshot', 'ready', '', 1, UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, UTC_TIMESTAMP(6))", [v.id]);
    qdrant.failNext({ status: 500, path: /DELETE .*lost\.snapshot/ });
    await run(TASK.snapshot, [v.id]);
    expect((await snapshotRows(v.id)).map((r) => r.name)).toContain('lost.snapshot');
    expect((await snapshotRows(v.id)).map((r) => r.name)).not.toContain('a.snapshot');
  });

  test('not ready is a VectorstoreServiceError; no such vectorstore is None; Qdrant failing marks the row failed', async () => {
    const p = await vectorstore({ status: 'provisioning' });
    await expect(run(TASK.snapshot, [p.id])).rejects.toMatchObject({ pyType: 'VectorstoreServiceError', message: `Vectorstore ${p.name} is provisioning, not ready. Deploy it first.` });
    expect(await run(TASK.snapshot, [987654321])).toBeNull();
    const v = await vectorstore();
    qdrant.failNext({ status: 500, path: /POST .*\/snapshots/, message: 'Service internal error: No space left on device' });
    await expect(run(TASK.snapshot, [v.id])).rejects.toThrow(`vectordb create snapshot ${v.collection}: Unavailable: Service internal error: No space left on device`);
    // the failed row is kept, saying why, until the next pruning removes it (as in Smarter)
    expect(await snapshotRows(v.id)).toMatchObject([{ status: 'failed', status_message: `vectordb create snapshot ${v.collection}: Unavailable: Service internal error: No space left on device` }]);
    await run(TASK.snapshot, [v.id]);
    expect((await snapshotRows(v.id)).map((r) => r.status)).toEqual(['ready']);
  });
});

describe('maintain_vectorstores', () => {
  test('snapshots when due, prunes, and queues lost documents again: deleting → delete, pending/loading → load', async () => {
    const v = await vectorstore();
    const pending = await documentRow(v.id, 'a', { status: 'pending', minutesAgo: 31 });
    const loading = await documentRow(v.id, 'b', { status: 'loading', minutesAgo: 45 });
    const deleting = await documentRow(v.id, 'c', { status: 'deleting', minutesAgo: 60 });
    await documentRow(v.id, 'd', { status: 'pending', minutesAgo: 5 });
    await documentRow(v.id, 'e', { status: 'loaded', minutesAgo: 600 });
    const out = (await run(TASK.maintain)) as Record<string, { status: string; snapshot: string | null; pruned: number; retry: number[] }>;
    const entry = out[`${v.name} (qdrant, managed)`];
    expect(entry).toMatchObject({ status: 'ready', pruned: 0, retry: [pending, loading, deleting] });
    expect(entry?.snapshot).toMatch(new RegExp(`^${v.collection}-`));
    const [snap] = await t.db.select('SELECT scheduled FROM vectorstore_vectorstoresnapshot WHERE vectorstore_id = ?', [v.id]);
    expect(snap?.scheduled).toBe(1);
    expect(applied).toEqual([
      { task: TASK.loadDocument, args: [pending], queue: OP },
      { task: TASK.loadDocument, args: [loading], queue: OP },
      { task: TASK.deleteDocument, args: [deleting], queue: OP },
    ]);
    expect((await vsRow(v.id))?.last_maintenance_at).not.toBeNull();
  });

  test('no snapshot before snapshotIntervalHours have passed, nor when snapshots are off', async () => {
    const recent = await vectorstore({ lastSnapshotHoursAgo: 23 });
    const off = await vectorstore({ spec: { maintenance: { snapshots: false } } });
    const due = await vectorstore({ lastSnapshotHoursAgo: 3, spec: { maintenance: { snapshotIntervalHours: 2 } } });
    const out = (await run(TASK.maintain)) as Record<string, { snapshot: string | null }>;
    expect(out[`${recent.name} (qdrant, managed)`]?.snapshot).toBeNull();
    expect(out[`${off.name} (qdrant, managed)`]?.snapshot).toBeNull();
    expect(out[`${due.name} (qdrant, managed)`]?.snapshot).toMatch(/\.snapshot$/);
  });

  test('a vectorstore that turns out unreachable is recorded failed and not snapshotted; a Pinecone one is left alone, saying why', async () => {
    const down = await vectorstore({ endpoint: closedUrl });
    const pine = await vectorstore({ backend: 'pinecone', withCollection: false });
    const ok = await vectorstore();
    const out = (await run(TASK.maintain)) as Record<string, Record<string, unknown>>;
    expect(out[`${down.name} (qdrant, managed)`]).toMatchObject({ status: 'failed', snapshot: null, retry: [] });
    expect(String(out[`${pine.name} (pinecone, managed)`]?.error)).toMatch(/"pinecone", which smarter-worker does not implement/);
    expect((await vsRow(pine.id))?.status).toBe('ready');
    expect(out[`${ok.name} (qdrant, managed)`]).toMatchObject({ status: 'ready' });
  });
});
