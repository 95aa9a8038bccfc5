/**
 * Smarter's five vectorstore tasks on a real MariaDB with Smarter's tables, through the real Qdrant client
 * (@qdrant/js-client-rest) against the Qdrant stand-in, Pinecone's official client against the Pinecone stand-in,
 * and the real embeddings adapter (fetch) against the OpenAI-compatible stand-in; Kubernetes (a self-hosted server's
 * StatefulSet) from the in-memory FakeCloud. Every vectorstore's keys are its own, as Smarter stores them:
 * Fernet-encrypted Secrets of its ApiConnection, of its Provider, or generated for a self-hosted server
 * (smarter/apps/vectorstore/backends/qdrant.py, backends/pinecone.py, embeddings.py). This file:
 * load_vectorstore_document, and each vectorstore's own credentials.
 */
import { chunkId } from '../../tasks/vectorstore/chunk-ids.js';
import { NO_OVERRIDES } from '../../tasks/env/settings.js';
import { vectorstoreTasks } from '../../tasks/vectorstore/index.js';
import { loadVectorstoreDocument } from '../../tasks/vectorstore/load-vectorstore-document.js';
import { startEmbeddingsStandIn, vectorOf } from '../support/embeddings-standin.js';
import { startQdrantStandIn } from '../support/qdrant-standin.js';
import { nameOf } from '../support/task-names.js';
import { DIM, envWith, useTasks, t, qdrant, api, pinecone, deps, closedUrl } from '../support/vectorstore-world.js';
import { shared, secret, apiConnection, provider, vectorstoreWorldForFile, run } from '../support/vectorstore-world.js';
import { vectorstore, documentRow, docRow, points, records, words } from '../support/vectorstore-world.js';

vectorstoreWorldForFile();

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
    useTasks(vectorstoreTasks(envWith(NO_OVERRIDES, '')));
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
      useTasks(
        vectorstoreTasks(
          envWith({ qdrantApiKey: 'qdrant-key', embeddingsUrl: otherApi.url, embeddingsApiKey: 'sk-override-0000' }),
        ),
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
