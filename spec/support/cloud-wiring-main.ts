/**
 * A process that builds the cloud adapters as the worker does (`openCloud`, configured from the environment only)
 * and reaches Qdrant and Pinecone the way the vectorstore backends do: the per-target handle comes out of a promise
 * chain (`.then((target) => cloud.vectordb.connect(target))`), then is called. Prints one JSON line of what it saw.
 * No handler for unhandled rejections is installed, so anything that would take the worker down ends this process.
 *
 * Env: QDRANT_URL, QDRANT_KEY, PINECONE_KEY, COLLECTION, plus the worker's own settings
 * (SMARTER_WORKER_PINECONE_CONTROLLER_URL) and NODE_EXTRA_CA_CERTS for the Pinecone stand-in's CA.
 */
import { loadConfig } from '../../lib/config/settings.js';
import { createLogger } from '../../lib/logger.js';
import { openCloud } from '../../tasks/cloud/index.js';
import { CLOUD_SETTINGS } from '../../tasks/cloud/settings.js';
import { VECTORSTORE_CLOUD_SETTINGS } from '../../tasks/cloud/vectorstore-settings.js';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const { values } = loadConfig({ ...CLOUD_SETTINGS, ...VECTORSTORE_CLOUD_SETTINGS }, process.env);
const cloud = openCloud(values, createLogger({ level: 'warn', json: true }));
const collection = env('COLLECTION');

const db = await Promise.resolve({ url: env('QDRANT_URL'), apiKey: env('QDRANT_KEY') }).then((target) =>
  cloud.vectordb.connect(target),
);
await db.createCollection(collection, { size: 4, distance: 'Cosine' });
await db.upsert(collection, [{ id: 1, vector: [1, 0, 0, 0], payload: { document_id: 7 } }]);
const qdrantCount = await db.count(collection);

const project = await Promise.resolve(env('PINECONE_KEY')).then((apiKey) => cloud.pinecone.connect({ apiKey }));
await project.createIndex({
  name: collection,
  dimension: 4,
  metric: 'cosine',
  cloud: 'aws',
  region: 'us-east-1',
  deletionProtection: 'disabled',
  tags: {},
});
await project.upsert(collection, [{ id: 'c1', values: [0, 1, 0, 0], metadata: { document_id: 7 } }]);
const pineconeHasIndex = await project.hasIndex(collection);

process.stdout.write(`${JSON.stringify({ qdrantCount, pineconeHasIndex })}\n`);
