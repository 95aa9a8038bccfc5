/**
 * The vector database and embeddings adapters through their real clients (@qdrant/js-client-rest, fetch)
 * against the stand-ins: idempotence as the ports promise, and every failure a CloudError naming service, verb
 * and resource with the server's own words.
 */
import { QdrantClient } from '@qdrant/js-client-rest';
import { nullLogger } from '../../lib/logger.js';
import type { EmbeddingsRequest } from '../../tasks/cloud/embeddings-port.js';
import { HttpEmbeddings } from '../../tasks/cloud/embeddings.js';
import type { CloudError } from '../../tasks/cloud/errors.js';
import { QdrantDatabases } from '../../tasks/cloud/vectordb.js';
import { type EmbeddingsStandIn, startEmbeddingsStandIn, vectorOf } from '../support/embeddings-standin.js';
import { type QdrantStandIn, startQdrantStandIn } from '../support/qdrant-standin.js';

let qdrant: QdrantStandIn;
let api: EmbeddingsStandIn;
beforeAll(async () => {
  qdrant = await startQdrantStandIn({ apiKey: 'k' });
  api = await startEmbeddingsStandIn({ apiKey: 'sk-abcd-9876', dimension: 4 });
});
afterAll(async () => {
  await qdrant.stop();
  await api.stop();
});

const db = (apiKey = 'k') =>
  new QdrantDatabases(nullLogger(), { timeoutSeconds: 5 }).connect({ url: qdrant.url, apiKey });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as CloudError,
  );

describe('Qdrant adapter', () => {
  test('one client per server and key, so its connections are reused', () => {
    const dbs = new QdrantDatabases(nullLogger(), { timeoutSeconds: 5 });
    expect(dbs.connect({ url: qdrant.url, apiKey: 'k' })).toBe(dbs.connect({ url: qdrant.url, apiKey: 'k' }));
    expect(dbs.connect({ url: qdrant.url, apiKey: 'k' })).not.toBe(dbs.connect({ url: qdrant.url, apiKey: 'other' }));
  });

  test("each target's own key goes in `api-key`: two servers with different keys, through one adapter", async () => {
    const other = await startQdrantStandIn({ apiKey: 'k2' });
    try {
      const dbs = new QdrantDatabases(nullLogger(), { timeoutSeconds: 5 });
      await dbs.connect({ url: qdrant.url, apiKey: 'k' }).createCollection('two-keys', { size: 2, distance: 'Cosine' });
      await dbs.connect({ url: other.url, apiKey: 'k2' }).createCollection('two-keys', { size: 2, distance: 'Cosine' });
      expect([qdrant.collections.has('two-keys'), other.collections.has('two-keys')]).toEqual([true, true]);
      expect(await failure(dbs.connect({ url: other.url, apiKey: 'k' }).count('two-keys'))).toMatchObject({
        kind: 'AccessDenied',
      });
    } finally {
      await other.stop();
    }
  });

  test('collections: create twice is success, get describes it, delete says whether there was one', async () => {
    const q = db();
    await q.health();
    expect(await q.getCollection('c1')).toBeNull();
    await q.createCollection('c1', { size: 4, distance: 'Dot' });
    await q.createCollection('c1', { size: 4, distance: 'Dot' });
    expect(await q.getCollection('c1')).toEqual({
      name: 'c1',
      status: 'green',
      pointsCount: 0,
      indexedVectorsCount: 0,
      segmentsCount: 2,
    });
    expect(await q.deleteCollection('c1')).toBe(true);
    expect(await q.deleteCollection('c1')).toBe(false);
  });

  test('points: upsert, count by filter, delete by filter and by id; scroll through the real client sees the payloads', async () => {
    const q = db();
    await q.createCollection('c2', { size: 2, distance: 'Cosine' });
    const id = (n: number) => `00000000-0000-5000-8000-00000000000${n}`;
    await q.upsert(
      'c2',
      [1, 2, 3].map((n) => ({ id: id(n), vector: [n, 1], payload: { metadata: { document_id: n < 3 ? 10 : 11 } } })),
    );
    expect(await q.count('c2')).toBe(3);
    expect(await q.count('c2', { key: 'metadata.document_id', value: 10 })).toBe(2);
    await q.deleteByFilter('c2', { key: 'metadata.document_id', value: 10 });
    const client = new QdrantClient({ url: qdrant.url, headers: { 'api-key': 'k' }, checkCompatibility: false });
    const page = await client.scroll('c2', { limit: 10, with_payload: true });
    expect(page.points).toEqual([{ id: id(3), payload: { metadata: { document_id: 11 } } }]);
    await q.deletePoints('c2', [id(3)]);
    expect(await q.count('c2')).toBe(0);
  });

  test('snapshots: create, list, delete; deleting a missing one is false', async () => {
    const q = db();
    await q.createCollection('c3', { size: 2, distance: 'Cosine' });
    const s = await q.createSnapshot('c3');
    expect(s.name).toMatch(/^c3-\d+-\d{4}(-\d\d){5}\.snapshot$/);
    expect((await q.listSnapshots('c3')).map((x) => x.name)).toEqual([s.name]);
    expect(await q.deleteSnapshot('c3', s.name)).toBe(true);
    expect(await q.deleteSnapshot('c3', s.name)).toBe(false);
  });

  test('errors are typed: a missing collection, a wrong or missing key, a bad id, a server error', async () => {
    expect(await failure(db().upsert('nope', []))).toMatchObject({
      kind: 'NotFound',
      message: "vectordb upsert points nope: NotFound: Not found: Collection `nope` doesn't exist!",
    });
    expect(await failure(db('bad').count('nope'))).toMatchObject({
      kind: 'AccessDenied',
      message: 'vectordb count points nope: AccessDenied: Invalid API key or JWT',
    });
    const anonymous = new QdrantDatabases(nullLogger(), { timeoutSeconds: 5 }).connect({ url: qdrant.url });
    expect(await failure(anonymous.count('nope'))).toMatchObject({
      kind: 'AccessDenied',
      message: 'vectordb count points nope: AccessDenied: Must provide an API key or an Authorization bearer token',
    });
    await anonymous.health(); // /healthz needs no key, as in Qdrant
    await db().createCollection('c4', { size: 2, distance: 'Cosine' });
    expect(await failure(db().upsert('c4', [{ id: 'not-a-uuid', vector: [1, 2], payload: {} }]))).toMatchObject({
      kind: 'Invalid',
    });
    qdrant.failNext({ status: 500, path: /snapshots/ });
    expect(await failure(db().listSnapshots('c4'))).toMatchObject({
      kind: 'Unavailable',
      service: 'vectordb',
      verb: 'list snapshots',
      resource: 'c4',
    });
  });
});

describe('embeddings adapter', () => {
  const adapter = new HttpEmbeddings({ timeoutSeconds: 5 }, nullLogger());
  const embeddings = (apiKey = 'sk-abcd-9876') => ({
    embed: (request: EmbeddingsRequest) => adapter.embed({ baseUrl: api.url, apiKey }, request),
  });

  test('POST {url}/embeddings with the model and texts; one vector per text, in order', async () => {
    expect(await embeddings().embed({ model: 'm', input: ['a', 'b'] })).toEqual([vectorOf('a', 4), vectorOf('b', 4)]);
    expect(api.calls.at(-1)).toMatchObject({
      model: 'm',
      input: ['a', 'b'],
      encodingFormat: 'float',
      authorization: 'Bearer sk-abcd-9876',
    });
  });

  test("no key is refused before any request; a wrong key, 429 and 500 keep the API's words", async () => {
    const before = api.calls.length;
    expect(await failure(embeddings('').embed({ model: 'm', input: ['a'] }))).toMatchObject({
      kind: 'AccessDenied',
      message: expect.stringContaining('no API key') as unknown,
    });
    expect(await failure(embeddings('sk-wrong-0000').embed({ model: 'm', input: ['a'] }))).toMatchObject({
      kind: 'AccessDenied',
      message: expect.stringContaining('HTTP 401: Incorrect API key provided: sk-***0000.') as unknown,
    });
    api.failNext(429);
    expect(await failure(embeddings().embed({ model: 'm', input: ['a'] }))).toMatchObject({ kind: 'Throttled' });
    api.failNext(500);
    expect(await failure(embeddings().embed({ model: 'm', input: ['a'] }))).toMatchObject({ kind: 'Unavailable' });
    expect(api.calls.length).toBe(before);
  });

  test("each call goes to its endpoint's URL with its key: two providers through one adapter", async () => {
    const other = await startEmbeddingsStandIn({ apiKey: 'sk-other-1111', dimension: 3 });
    try {
      expect(
        await adapter.embed({ baseUrl: other.url, apiKey: 'sk-other-1111' }, { model: 'm2', input: ['a'] }),
      ).toEqual([vectorOf('a', 3)]);
      expect(
        await adapter.embed({ baseUrl: `${api.url}/`, apiKey: 'sk-abcd-9876' }, { model: 'm1', input: ['a'] }),
      ).toEqual([vectorOf('a', 4)]);
      expect(other.calls.map((c) => [c.model, c.authorization])).toEqual([['m2', 'Bearer sk-other-1111']]);
      expect(api.calls.at(-1)).toMatchObject({ model: 'm1', authorization: 'Bearer sk-abcd-9876' });
    } finally {
      await other.stop();
    }
  });
});
