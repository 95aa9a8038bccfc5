/**
 * The Pinecone adapter through Pinecone's official client (@pinecone-database/pinecone) against the Pinecone
 * stand-in over TLS: the control-plane and data-plane calls Smarter's `backends/pinecone.py` makes, and every
 * failure a CloudError naming service, verb and index with the client's and Pinecone's words. The stand-in's
 * query and filter deletes are checked through the same client, as a Python reader of the index would query it.
 */
import net from 'node:net';
import { Pinecone } from '@pinecone-database/pinecone';
import { nullLogger } from '../../lib/logger.js';
import type { CloudError } from '../../tasks/cloud/errors.js';
import { SdkPineconeProjects } from '../../tasks/cloud/pinecone.js';
import { type PineconeStandIn, startPineconeStandIn } from '../support/pinecone-standin.js';

let pc: PineconeStandIn;
let seq = 0;
beforeAll(async () => {
  pc = await startPineconeStandIn({ apiKey: 'pk-one' });
}, 60_000);
afterAll(async () => {
  await pc.stop();
});

const projects = (maxRetries = 0) =>
  new SdkPineconeProjects(nullLogger(), {
    controllerUrl: pc.controllerUrl,
    timeoutSeconds: 5,
    maxRetries,
    fetch: pc.fetch,
  });
const project = (apiKey = 'pk-one') => projects().connect({ apiKey });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as CloudError,
  );
const fresh = () => `idx-${process.pid}-${(seq += 1)}`;
const newIndex = (name: string, dimension = 4) => ({
  name,
  dimension,
  metric: 'cosine' as const,
  cloud: 'aws',
  region: 'us-east-1',
  deletionProtection: 'disabled' as const,
  tags: { created_by: 'smarter', vectorstore: '12' },
});

test('one client per API key', () => {
  const p = projects();
  expect(p.connect({ apiKey: 'a' })).toBe(p.connect({ apiKey: 'a' }));
  expect(p.connect({ apiKey: 'a' })).not.toBe(p.connect({ apiKey: 'b' }));
});

test('indexes: absent, created as a serverless index with its tags and protection, described, and refused twice', async () => {
  const p = project();
  const name = fresh();
  expect(await p.hasIndex(name)).toBe(false);
  await p.createIndex({
    ...newIndex(name, 8),
    metric: 'dotproduct',
    cloud: 'gcp',
    region: 'us-central1',
    deletionProtection: 'enabled',
  });
  expect(await p.hasIndex(name)).toBe(true);
  expect(pc.indexes.get(name)).toMatchObject({
    dimension: 8,
    metric: 'dotproduct',
    cloud: 'gcp',
    region: 'us-central1',
    deletionProtection: 'enabled',
    tags: { created_by: 'smarter', vectorstore: '12' },
  });
  expect(await p.indexStatus(name)).toEqual({ ready: true, state: 'Ready' });
  const ix = pc.indexes.get(name);
  if (ix) ix.status = { ready: false, state: 'Initializing' };
  expect(await p.indexStatus(name)).toEqual({ ready: false, state: 'Initializing' });
  expect(await failure(p.createIndex(newIndex(name)))).toMatchObject({
    service: 'pinecone',
    verb: 'create index',
    resource: name,
    kind: 'Conflict',
  });
  expect(pc.requests).toContain('POST /indexes');
});

test('records: upserted into the default namespace on the index host, counted, deleted by id; metadata kept as sent', async () => {
  const p = project();
  const name = fresh();
  await p.createIndex(newIndex(name));
  await p.upsert(name, [
    { id: 'a', values: [1, 0, 0, 0], metadata: { text: 'alpha', document_id: 7, chunk: 0, tags: ['x', 'y'] } },
    { id: 'b', values: [0, 1, 0, 0], metadata: { text: 'beta', document_id: 7, chunk: 1 } },
    { id: 'c', values: [0, 0, 1, 0], metadata: { text: 'gamma', document_id: 8, chunk: 0 } },
  ]);
  expect(pc.requests).toContain(`${name}: POST /vectors/upsert`);
  expect([...(pc.indexes.get(name)?.namespaces.keys() ?? [])]).toEqual(['']);
  expect(pc.indexes.get(name)?.namespaces.get('')?.get('a')).toEqual({
    id: 'a',
    values: [1, 0, 0, 0],
    metadata: { text: 'alpha', document_id: 7, chunk: 0, tags: ['x', 'y'] },
  });
  expect(await p.describeIndexStats(name)).toEqual({ totalVectorCount: 3, dimension: 4, indexFullness: 0 });
  await p.deleteIds(name, ['a', 'missing']);
  expect(await p.describeIndexStats(name)).toMatchObject({ totalVectorCount: 2 });
});

test("the stand-in answers the client's queries and filter deletes as Pinecone does (the default namespace is __default__)", async () => {
  const p = project();
  const name = fresh();
  await p.createIndex(newIndex(name));
  await p.upsert(name, [
    { id: 'a', values: [1, 0, 0, 0], metadata: { document_id: 7 } },
    { id: 'b', values: [0.9, 0.1, 0, 0], metadata: { document_id: 8 } },
    { id: 'c', values: [0, 0, 1, 0], metadata: { document_id: 8 } },
  ]);
  const client = new Pinecone({
    apiKey: 'pk-one',
    controllerHostUrl: pc.controllerUrl,
    fetchApi: pc.fetch as unknown as typeof fetch,
    maxRetries: 0,
  });
  const index = client.index(name);
  const top = await index.query({ vector: [1, 0, 0, 0], topK: 2, includeMetadata: true });
  expect(top.matches.map((m) => m.id)).toEqual(['a', 'b']);
  expect(top.matches[0]?.metadata).toEqual({ document_id: 7 });
  const filtered = await index.query({ vector: [1, 0, 0, 0], topK: 5, filter: { document_id: { $eq: 8 } } });
  expect(filtered.matches.map((m) => m.id)).toEqual(['b', 'c']);
  expect((await index.describeIndexStats()).namespaces).toEqual({ __default__: { recordCount: 3 } });
  await index.deleteMany({ filter: { document_id: { $in: [8] } } });
  expect(Object.keys((await index.fetch({ ids: ['a', 'b', 'c'] })).records)).toEqual(['a']);
  await index.namespace('other').upsert({ records: [{ id: 'z', values: [0, 0, 0, 1] }] });
  expect((await index.describeIndexStats()).namespaces).toEqual({
    __default__: { recordCount: 1 },
    other: { recordCount: 1 },
  });
});

test('backups: created with their name and description, described by backup_id, size and status; deleted; a missing one is NotFound', async () => {
  const p = project();
  const name = fresh();
  await p.createIndex(newIndex(name));
  await p.upsert(name, [{ id: 'a', values: [1, 0, 0, 0], metadata: {} }]);
  const b = await p.createBackup(name, `${name}-20260101-000000`, 'smarter backup');
  expect(b).toEqual({
    backupId: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
    status: 'Ready',
    sizeBytes: expect.any(Number) as unknown,
  });
  expect(pc.backups.get(b.backupId)).toMatchObject({
    name: `${name}-20260101-000000`,
    description: 'smarter backup',
    source_index_name: name,
    record_count: 1,
  });
  pc.backupStatus = 'Initializing';
  expect((await p.createBackup(name, 'second', 'smarter backup')).status).toBe('Initializing');
  pc.backupStatus = 'Ready';
  await p.deleteBackup(b.backupId);
  expect(pc.backups.has(b.backupId)).toBe(false);
  expect(await failure(p.deleteBackup(b.backupId))).toMatchObject({
    kind: 'NotFound',
    verb: 'delete backup',
    resource: b.backupId,
  });
});

test("errors are typed with the client's and Pinecone's words: a wrong key, a missing index, a wrong dimension, refused metadata, a server error", async () => {
  const name = fresh();
  await project().createIndex(newIndex(name));
  expect(await failure(project('pk-wrong').hasIndex(name))).toMatchObject({
    kind: 'AccessDenied',
    message: expect.stringMatching(
      /^pinecone list indexes .*: AccessDenied: The API key you provided was rejected while calling https:\/\/127\.0\.0\.1:\d+\/indexes/,
    ) as unknown,
  });
  expect(await failure(project().describeIndexStats('nope'))).toMatchObject({
    kind: 'NotFound',
    verb: 'describe index stats',
    resource: 'nope',
  });
  expect(await failure(project().upsert(name, [{ id: 'a', values: [1, 2, 3], metadata: {} }]))).toMatchObject({
    kind: 'Invalid',
    message: `pinecone upsert vectors ${name}: Invalid: Vector dimension 3 does not match the dimension of the index 4`,
  });
  expect(
    await failure(project().upsert(name, [{ id: 'a', values: [1, 2, 3, 4], metadata: { page: null } }])),
  ).toMatchObject({ kind: 'Invalid', message: expect.stringContaining("got 'null' for field 'page'") as unknown });
  pc.failNext({ status: 503, path: /vectors\/delete/, message: 'Service unavailable' });
  expect(await failure(project().deleteIds(name, ['a']))).toMatchObject({
    kind: 'Unavailable',
    verb: 'delete vectors',
  });
});

test('a 5xx is retried by the client; an unreachable control plane is Unavailable, naming why', async () => {
  const name = fresh();
  await project().createIndex(newIndex(name));
  pc.failNext({ status: 500, path: /describe_index_stats/ });
  expect(await projects(2).connect({ apiKey: 'pk-one' }).describeIndexStats(name)).toMatchObject({
    totalVectorCount: 0,
  });
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const closed = `https://127.0.0.1:${(probe.address() as net.AddressInfo).port}`;
  await new Promise((resolve) => probe.close(resolve));
  const down = new SdkPineconeProjects(nullLogger(), {
    controllerUrl: closed,
    timeoutSeconds: 5,
    maxRetries: 0,
    fetch: pc.fetch,
  }).connect({ apiKey: 'pk-one' });
  expect(await failure(down.hasIndex(name))).toMatchObject({
    kind: 'Unavailable',
    message: expect.stringContaining('ECONNREFUSED') as unknown,
  });
});
