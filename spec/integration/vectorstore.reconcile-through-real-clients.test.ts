/**
 * Smarter's five vectorstore tasks on a real MariaDB with Smarter's tables, through the real Qdrant client
 * (@qdrant/js-client-rest) against the Qdrant stand-in, Pinecone's official client against the Pinecone stand-in,
 * and the real embeddings adapter (fetch) against the OpenAI-compatible stand-in; Kubernetes (a self-hosted server's
 * StatefulSet) from the in-memory FakeCloud. Every vectorstore's keys are its own, as Smarter stores them:
 * Fernet-encrypted Secrets of its ApiConnection, of its Provider, or generated for a self-hosted server
 * (smarter/apps/vectorstore/backends/qdrant.py, backends/pinecone.py, embeddings.py). This file: the registry,
 * reconcile_vectorstores, and the default index name.
 */
import { bindArguments } from '../../lib/registry/args.js';
import type { AnyTask } from '../../lib/registry/define-task.js';
import { type SmarterDeps } from '../../tasks/env/task-env.js';
import { deleteVectorstoreDocument } from '../../tasks/vectorstore/delete-vectorstore-document.js';
import { loadVectorstoreDocument } from '../../tasks/vectorstore/load-vectorstore-document.js';
import { maintainVectorstores } from '../../tasks/vectorstore/maintain-vectorstores.js';
import { reconcileVectorstores } from '../../tasks/vectorstore/reconcile-vectorstores.js';
import { snapshotVectorstore } from '../../tasks/vectorstore/snapshot-vectorstore.js';
import { SMARTER_CATALOG } from '../../tasks/catalog.js';
import { testCloud } from '../support/cloud.js';
import { nameOf } from '../support/task-names.js';
import { OP, INFRA, NS, DIM, tasks, t, qdrant, pinecone, fake, closedUrl } from '../support/vectorstore-world.js';
import { shared, apiConnection, vectorstoreWorldForFile, run, vectorstore } from '../support/vectorstore-world.js';
import { documentRow, vsRow, points, records } from '../support/vectorstore-world.js';

vectorstoreWorldForFile();

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
