/** The parts of a vectorstore manifest's spec (`VectorstoreMeta.spec`) that the tasks read. */
import type { VectorstoreRow } from './rows.js';

const object = (x: unknown): Record<string, unknown> =>
  x !== null && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : {};

/** `spec.embeddings`: positive integers only, as Smarter's `or` defaults treat 0 and null. */
export function embeddingsSpec(v: VectorstoreRow): {
  chunkSize?: number;
  chunkOverlap?: number;
  batchSize?: number;
  dimensions?: number;
} {
  const e = object(v.spec.embeddings);
  const pick = (k: string) => {
    const x = e[k];
    return typeof x === 'number' && Number.isInteger(x) && x > 0 ? x : undefined;
  };
  return {
    chunkSize: pick('chunkSize'),
    chunkOverlap: pick('chunkOverlap'),
    batchSize: pick('batchSize'),
    dimensions: pick('dimensions'),
  };
}

/** `spec.pinecone`: the serverless index's cloud and region, `aws` and `us-east-1` unless set. */
export function pineconeSpec(v: VectorstoreRow): { cloud: string; region: string } {
  const p = object(v.spec.pinecone);
  return {
    cloud: typeof p.cloud === 'string' ? p.cloud : 'aws',
    region: typeof p.region === 'string' ? p.region : 'us-east-1',
  };
}

/** `VectorstoreMeta.maintenance`: `spec.maintenance`. */
export const maintenanceSpec = (v: VectorstoreRow): Record<string, unknown> => object(v.spec.maintenance);
