/**
 * The data plane of a Pinecone stand-in index (pinecone-standin.ts): upsert, query, delete, fetch, stats and
 * namespaces on the stored records, with Pinecone's metadata rules, filter language and wording of refusals.
 */

export type Metadata = Record<string, string | number | boolean | string[]>;

export interface StoredRecord {
  id: string;
  values: number[];
  metadata?: Metadata;
}

export interface StoredIndex {
  name: string;
  dimension: number;
  metric: 'cosine' | 'euclidean' | 'dotproduct';
  deletionProtection: 'enabled' | 'disabled';
  tags: Record<string, string>;
  cloud: string;
  region: string;
  /** What `describe_index` says; a test sets `{ready: false, state: 'Initializing'}` to show one starting. */
  status: { ready: boolean; state: string };
  /** `host:port` of its data plane. */
  host: string;
  /** By namespace; the default one is `''`. */
  readonly namespaces: Map<string, Map<string, StoredRecord>>;
}

export class PineconeHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const bad = (message: string) => new PineconeHttpError(400, 'INVALID_ARGUMENT', message);
const DEFAULT_NAMESPACE = '__default__';
const nsKey = (ns: unknown): string => (typeof ns !== 'string' || ns === DEFAULT_NAMESPACE ? '' : ns);
const nsName = (ns: string): string => (ns === '' ? DEFAULT_NAMESPACE : ns);

function validMetadata(metadata: unknown): Metadata | undefined {
  if (metadata === undefined || metadata === null) return undefined;
  if (typeof metadata !== 'object' || Array.isArray(metadata)) throw bad('Metadata must be an object');
  for (const [k, v] of Object.entries(metadata)) {
    const ok =
      typeof v === 'string' ||
      typeof v === 'boolean' ||
      (typeof v === 'number' && Number.isFinite(v)) ||
      (Array.isArray(v) && v.every((x) => typeof x === 'string'));
    if (!ok) {
      throw bad(
        `Metadata value must be a string, number, boolean or list of strings, got '${v === null ? 'null' : JSON.stringify(v)}' for field '${k}'`,
      );
    }
  }
  return metadata as Metadata;
}

type Filter = Record<string, unknown>;

function compare(value: unknown, op: string, operand: unknown): boolean {
  switch (op) {
    case '$eq':
      return Array.isArray(value) ? value.includes(operand) : value === operand;
    case '$ne':
      return Array.isArray(value) ? !value.includes(operand) : value !== operand;
    case '$gt':
      return typeof value === 'number' && value > (operand as number);
    case '$gte':
      return typeof value === 'number' && value >= (operand as number);
    case '$lt':
      return typeof value === 'number' && value < (operand as number);
    case '$lte':
      return typeof value === 'number' && value <= (operand as number);
    case '$in':
      if (!Array.isArray(operand)) throw bad('$in requires an array');
      return Array.isArray(value) ? value.some((x) => operand.includes(x)) : operand.includes(value);
    case '$nin':
      if (!Array.isArray(operand)) throw bad('$nin requires an array');
      return Array.isArray(value) ? !value.some((x) => operand.includes(x)) : !operand.includes(value);
    case '$exists':
      return (value !== undefined) === Boolean(operand);
    default:
      throw bad(`Invalid filter operator: ${op}`);
  }
}

function matches(record: StoredRecord, filter: Filter | undefined): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([key, cond]) => {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(cond)) throw bad(`${key} requires an array`);
      const parts = cond.map((f) => matches(record, f as Filter));
      return key === '$and' ? parts.every(Boolean) : parts.some(Boolean);
    }
    const value = record.metadata?.[key];
    if (cond !== null && typeof cond === 'object' && !Array.isArray(cond)) {
      return Object.entries(cond).every(([op, operand]) => compare(value, op, operand));
    }
    return compare(value, '$eq', cond);
  });
}

function score(metric: StoredIndex['metric'], a: number[], b: number[]): number {
  const dot = a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0);
  if (metric === 'dotproduct') return dot;
  if (metric === 'euclidean') return a.reduce((s, x, i) => s + (x - (b[i] ?? 0)) ** 2, 0);
  const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return dot / (norm(a) * norm(b));
}

export function answerData(
  ix: StoredIndex,
  method: string,
  path: string,
  query: URLSearchParams,
  body: Record<string, unknown>,
): [number, unknown] {
  const namespace = (ns: unknown) => {
    const key = nsKey(ns);
    let records = ix.namespaces.get(key);
    if (!records) {
      records = new Map();
      ix.namespaces.set(key, records);
    }
    return records;
  };
  if (path === '/vectors/upsert' && method === 'POST') {
    const vectors = body.vectors;
    if (!Array.isArray(vectors) || vectors.length === 0) throw bad('Invalid request: vectors must not be empty');
    if (vectors.length > 1000) {
      throw bad(`Invalid request: upsert of ${vectors.length} vectors exceeds the limit of 1000`);
    }
    const parsed = vectors.map((v: unknown) => {
      const r = v as { id?: unknown; values?: unknown; metadata?: unknown };
      if (typeof r.id !== 'string' || r.id === '' || r.id.length > 512) {
        throw bad('Invalid request: a vector id must be a string of 1 to 512 characters');
      }
      if (!Array.isArray(r.values) || !r.values.every((x) => typeof x === 'number')) {
        throw bad(`Invalid request: vector ${r.id} has no dense values`);
      }
      if (r.values.length !== ix.dimension) {
        throw bad(`Vector dimension ${r.values.length} does not match the dimension of the index ${ix.dimension}`);
      }
      const metadata = validMetadata(r.metadata);
      return { id: r.id, values: r.values, ...(metadata ? { metadata } : {}) };
    });
    const records = namespace(body.namespace);
    for (const r of parsed) records.set(r.id, r);
    return [200, { upsertedCount: parsed.length }];
  }
  if (path === '/vectors/delete' && method === 'POST') {
    const records = ix.namespaces.get(nsKey(body.namespace));
    if (body.deleteAll === true) ix.namespaces.delete(nsKey(body.namespace));
    else if (Array.isArray(body.ids)) for (const id of body.ids) records?.delete(String(id));
    else if (body.filter && typeof body.filter === 'object') {
      for (const [id, r] of [...(records ?? [])]) if (matches(r, body.filter as Filter)) records?.delete(id);
    } else throw bad('Invalid request: one of ids, filter or deleteAll is required');
    return [200, {}];
  }
  if (path === '/query' && method === 'POST') {
    const topK = body.topK;
    if (typeof topK !== 'number' || topK < 1 || topK > 10000) {
      throw bad('Invalid request: topK must be between 1 and 10000');
    }
    const records = [...(ix.namespaces.get(nsKey(body.namespace))?.values() ?? [])];
    const vector = Array.isArray(body.vector)
      ? (body.vector as number[])
      : typeof body.id === 'string'
        ? records.find((r) => r.id === body.id)?.values
        : undefined;
    if (!vector) throw bad('Invalid request: a query needs a vector or the id of a stored vector');
    if (vector.length !== ix.dimension) {
      throw bad(`Query vector dimension ${vector.length} does not match the dimension of the index ${ix.dimension}`);
    }
    const scored = records
      .filter((r) => matches(r, body.filter as Filter | undefined))
      .map((r) => ({ r, s: score(ix.metric, vector, r.values) }))
      .sort((a, b) => (ix.metric === 'euclidean' ? a.s - b.s : b.s - a.s))
      .slice(0, topK);
    return [
      200,
      {
        results: [],
        matches: scored.map(({ r, s }) => ({
          id: r.id,
          score: s,
          values: body.includeValues === true ? r.values : [],
          ...(body.includeMetadata === true && r.metadata ? { metadata: r.metadata } : {}),
        })),
        namespace: nsKey(body.namespace),
        usage: { readUnits: 5 },
      },
    ];
  }
  if (path === '/vectors/fetch' && method === 'GET') {
    const records = ix.namespaces.get(nsKey(query.get('namespace')));
    const vectors: Record<string, StoredRecord> = {};
    for (const id of query.getAll('ids')) {
      const r = records?.get(id);
      if (r) vectors[id] = r;
    }
    return [200, { vectors, namespace: nsKey(query.get('namespace')), usage: { readUnits: 1 } }];
  }
  if (path === '/describe_index_stats' && method === 'POST') {
    const namespaces: Record<string, { vectorCount: number }> = {};
    let total = 0;
    for (const [ns, records] of ix.namespaces) {
      const n = [...records.values()].filter((r) => matches(r, body.filter as Filter | undefined)).length;
      if (records.size === 0) continue;
      namespaces[nsName(ns)] = { vectorCount: n };
      total += n;
    }
    return [
      200,
      {
        namespaces,
        dimension: ix.dimension,
        indexFullness: 0,
        totalVectorCount: total,
        metric: ix.metric,
        vectorType: 'dense',
      },
    ];
  }
  if (path === '/namespaces' && method === 'GET') {
    return [
      200,
      {
        namespaces: [...ix.namespaces]
          .filter(([, r]) => r.size > 0)
          .map(([ns, r]) => ({ name: nsName(ns), record_count: String(r.size) })),
        pagination: null,
      },
    ];
  }
  throw new PineconeHttpError(404, 'NOT_FOUND', `Not found: ${method} ${path}`);
}
