/**
 * An HTTP server speaking the subset of Qdrant's REST API that the worker calls, reached through the real
 * @qdrant/js-client-rest:
 *
 *   const qdrant = await startQdrantStandIn({ apiKey: 'k' });
 *   new QdrantClient({ url: qdrant.url, apiKey: 'k', checkCompatibility: false });
 *   qdrant.failNext({ status: 500, path: /\/points/ });
 *
 * As Qdrant answers: every JSON answer is `{result, status: "ok", time}`, every error `{status: {error}, time}`
 * with Qdrant's wording (404 `Not found: Collection `x` doesn't exist!`, 400 `Wrong input: …` for an existing
 * collection or a vector of the wrong dimension, 400 `Format error in JSON body: …` for a bad point id); an API
 * key, when set, is required in `api-key` or `Authorization: Bearer` (401 without one, 403 when wrong, in plain
 * text as Qdrant's auth middleware answers), except on `/healthz`, `/livez` and `/readyz`. Served: `/`,
 * `/healthz`, collections create/get/exists/delete, payload index, points upsert/delete (ids or filter)/count/
 * scroll, collection snapshots create/list/delete (named `<collection>-<peer id>-<YYYY-MM-DD-HH-MM-SS>.snapshot`).
 * Filters: `must` of `{key, match: {value}}` with dotted keys, which is all the worker sends.
 */
import type http from 'node:http';
import { createHash } from 'node:crypto';
import { readBody, startStandin } from './http-standin.js';

export interface StoredPoint {
  id: string | number;
  vector: number[];
  payload: Record<string, unknown>;
}

export interface StoredSnapshot {
  name: string;
  creation_time: string;
  size: number;
  checksum: string;
}

export interface StoredCollection {
  size: number;
  distance: string;
  points: Map<string, StoredPoint>;
  snapshots: StoredSnapshot[];
  payloadSchema: Record<string, { data_type: string; points: number }>;
}

export interface QdrantFault {
  status: number;
  /** Matched against `METHOD /path`; any request when absent. */
  path?: RegExp;
  message?: string;
}

export interface QdrantStandIn {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  readonly collections: Map<string, StoredCollection>;
  /** The next request matching gets this error instead of being served. */
  failNext(fault: QdrantFault): void;
  /** Every request, as `METHOD /path?query`. */
  readonly requests: string[];
  stop(): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const PEER_ID = 7436982015428112;

class QdrantHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly plain = false,
  ) {
    super(message);
  }
}

const notFound = (name: string) => new QdrantHttpError(404, `Not found: Collection \`${name}\` doesn't exist!`);

function normalizeId(id: unknown): string | number {
  if (typeof id === 'number' && Number.isInteger(id) && id >= 0) return id;
  if (typeof id === 'string' && UUID.test(id)) {
    const h = id.replace(/-/g, '').toLowerCase();
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  throw new QdrantHttpError(
    400,
    `Format error in JSON body: value ${JSON.stringify(id)} is not a valid point ID, valid values are either an unsigned integer or a UUID`,
  );
}

function valueAt(payload: Record<string, unknown>, key: string): unknown {
  let v: unknown = payload;
  for (const part of key.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

function matches(point: StoredPoint, filter: unknown): boolean {
  if (filter === undefined || filter === null) return true;
  const must = (filter as { must?: unknown }).must;
  if (!Array.isArray(must)) {
    throw new QdrantHttpError(400, 'Format error in JSON body: this stand-in understands only `must` filters');
  }
  return must.every((c: unknown) => {
    const cond = c as { key?: unknown; match?: { value?: unknown } };
    if (typeof cond.key !== 'string' || cond.match === undefined) {
      throw new QdrantHttpError(400, 'Format error in JSON body: a condition needs `key` and `match`');
    }
    return valueAt(point.payload, cond.key) === cond.match.value;
  });
}

function snapshotStamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}-${p(d.getUTCHours())}-${p(d.getUTCMinutes())}-${p(d.getUTCSeconds())}`;
}

export async function startQdrantStandIn(options: { apiKey?: string } = {}): Promise<QdrantStandIn> {
  const collections = new Map<string, StoredCollection>();
  const faults: QdrantFault[] = [];
  const requests: string[] = [];
  let operation = 0;

  const collection = (name: string): StoredCollection => {
    const c = collections.get(name);
    if (!c) throw notFound(name);
    return c;
  };
  const completed = () => ({ operation_id: (operation += 1), status: 'completed' });

  function authorize(req: http.IncomingMessage, path: string): void {
    if (!options.apiKey || ['/healthz', '/livez', '/readyz'].includes(path)) return;
    const header = req.headers['api-key'];
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const key = typeof header === 'string' ? header : bearer;
    if (key === undefined) {
      throw new QdrantHttpError(401, 'Must provide an API key or an Authorization bearer token', true);
    }
    if (key !== options.apiKey) throw new QdrantHttpError(403, 'Invalid API key or JWT', true);
  }

  function route(method: string, path: string, body: Record<string, unknown>): unknown {
    if (method === 'GET' && path === '/') {
      return { raw: { title: 'qdrant - vector search engine', version: '1.18.0', commit: 'stand-in' } };
    }
    if (method === 'GET' && ['/healthz', '/livez', '/readyz'].includes(path)) return { text: 'healthz check passed' };
    const m = /^\/collections\/([^/]+)(\/.*)?$/.exec(path);
    if (!m) throw new QdrantHttpError(404, `Not found: ${path}`, true);
    const name = decodeURIComponent(m[1] ?? '');
    const rest = m[2] ?? '';

    if (rest === '') {
      if (method === 'GET') {
        const c = collection(name);
        return {
          result: {
            status: 'green',
            optimizer_status: 'ok',
            indexed_vectors_count: 0,
            points_count: c.points.size,
            segments_count: 2,
            config: {
              params: {
                vectors: { size: c.size, distance: c.distance },
                shard_number: 1,
                replication_factor: 1,
                write_consistency_factor: 1,
                on_disk_payload: true,
              },
              hnsw_config: {
                m: 16,
                ef_construct: 100,
                full_scan_threshold: 10000,
                max_indexing_threads: 0,
                on_disk: false,
              },
              optimizer_config: {
                deleted_threshold: 0.2,
                vacuum_min_vector_number: 1000,
                default_segment_number: 0,
                flush_interval_sec: 5,
              },
              wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 0 },
            },
            payload_schema: c.payloadSchema,
          },
        };
      }
      if (method === 'PUT') {
        if (collections.has(name)) {
          throw new QdrantHttpError(400, `Wrong input: Collection \`${name}\` already exists!`);
        }
        const vectors = body.vectors as { size?: unknown; distance?: unknown } | undefined;
        if (
          !vectors ||
          typeof vectors.size !== 'number' ||
          !['Cosine', 'Euclid', 'Dot', 'Manhattan'].includes(String(vectors.distance))
        ) {
          throw new QdrantHttpError(
            400,
            'Format error in JSON body: `vectors` needs `size` and `distance` (Cosine, Euclid, Dot or Manhattan)',
          );
        }
        collections.set(name, {
          size: vectors.size,
          distance: String(vectors.distance),
          points: new Map(),
          snapshots: [],
          payloadSchema: {},
        });
        return { result: true };
      }
      if (method === 'DELETE') return { result: collections.delete(name) };
    }
    if (rest === '/exists' && method === 'GET') return { result: { exists: collections.has(name) } };
    if (rest === '/index' && method === 'PUT') {
      const c = collection(name);
      const field = body.field_name;
      if (typeof field !== 'string') {
        throw new QdrantHttpError(400, 'Format error in JSON body: missing field `field_name`');
      }
      c.payloadSchema[field] = { data_type: String(body.field_schema), points: 0 };
      return { result: completed() };
    }
    if (rest === '/points' && method === 'PUT') {
      const c = collection(name);
      const points = body.points;
      if (!Array.isArray(points)) throw new QdrantHttpError(400, 'Format error in JSON body: missing field `points`');
      const parsed = points.map((p: unknown) => {
        const point = p as { id?: unknown; vector?: unknown; payload?: unknown };
        const id = normalizeId(point.id);
        if (!Array.isArray(point.vector) || !point.vector.every((x) => typeof x === 'number')) {
          throw new QdrantHttpError(400, 'Format error in JSON body: `vector` must be a list of numbers');
        }
        if (point.vector.length !== c.size) {
          throw new QdrantHttpError(
            400,
            `Wrong input: Vector dimension error: expected dim: ${c.size}, got ${point.vector.length}`,
          );
        }
        return { id, vector: point.vector, payload: (point.payload ?? {}) as Record<string, unknown> };
      });
      for (const p of parsed) c.points.set(String(p.id), p);
      return { result: completed() };
    }
    if (rest === '/points/delete' && method === 'POST') {
      const c = collection(name);
      if (Array.isArray(body.points)) for (const id of body.points) c.points.delete(String(normalizeId(id)));
      else if (body.filter !== undefined) {
        for (const [k, p] of [...c.points]) if (matches(p, body.filter)) c.points.delete(k);
      } else throw new QdrantHttpError(400, 'Format error in JSON body: expected `points` or `filter`');
      return { result: completed() };
    }
    if (rest === '/points/count' && method === 'POST') {
      const c = collection(name);
      return { result: { count: [...c.points.values()].filter((p) => matches(p, body.filter)).length } };
    }
    if (rest === '/points/scroll' && method === 'POST') {
      const c = collection(name);
      const limit = typeof body.limit === 'number' ? body.limit : 10;
      const all = [...c.points.values()]
        .filter((p) => matches(p, body.filter))
        .sort((a, b) => String(a.id).localeCompare(String(b.id)));
      const start =
        body.offset === undefined || body.offset === null
          ? 0
          : all.findIndex((p) => String(p.id) === String(normalizeId(body.offset)));
      const page = all.slice(Math.max(0, start), Math.max(0, start) + limit);
      const next = all[Math.max(0, start) + limit];
      return {
        result: {
          points: page.map((p) => ({
            id: p.id,
            payload: body.with_payload === false ? null : p.payload,
            ...(body.with_vector === true ? { vector: p.vector } : {}),
          })),
          next_page_offset: next ? next.id : null,
        },
      };
    }
    if (rest === '/snapshots') {
      const c = collection(name);
      if (method === 'GET') return { result: c.snapshots };
      if (method === 'POST') {
        const created = new Date();
        const snapshotName = `${name}-${PEER_ID}-${snapshotStamp(created)}.snapshot`;
        // Qdrant names a snapshot by the second; two in one second would collide, which it refuses too.
        if (c.snapshots.some((s) => s.name === snapshotName)) {
          throw new QdrantHttpError(409, `Snapshot ${snapshotName} already exists`);
        }
        const content = JSON.stringify([...c.points.values()]);
        const s = {
          name: snapshotName,
          creation_time: created.toISOString().slice(0, 19),
          size: Buffer.byteLength(content) + 1024,
          checksum: createHash('sha256').update(content).digest('hex'),
        };
        c.snapshots.push(s);
        return { result: s };
      }
    }
    const snap = /^\/snapshots\/([^/]+)$/.exec(rest);
    if (snap && method === 'DELETE') {
      const c = collection(name);
      const snapshotName = decodeURIComponent(snap[1] ?? '');
      const i = c.snapshots.findIndex((s) => s.name === snapshotName);
      if (i < 0) throw new QdrantHttpError(404, `Not found: Snapshot file \`${snapshotName}\` does not exist`);
      c.snapshots.splice(i, 1);
      return { result: true };
    }
    throw new QdrantHttpError(404, `Not found: ${method} ${path}`, true);
  }

  const standin = await startStandin(async (req, res) => {
    const raw = (await readBody(req)).toString('utf8');
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const method = req.method ?? 'GET';
    requests.push(`${method} ${url.pathname}${url.search}`);
    const time = () => (performance.now() - started) / 1000;
    const send = (status: number, payload: unknown, plain = false) => {
      const text = plain ? String(payload) : JSON.stringify(payload);
      res.writeHead(status, { 'content-type': plain ? 'text/plain; charset=utf-8' : 'application/json' });
      res.end(text);
    };
    try {
      const i = faults.findIndex((f) => !f.path || f.path.test(`${method} ${url.pathname}`));
      if (i >= 0) {
        const [f] = faults.splice(i, 1);
        throw new QdrantHttpError(f?.status ?? 500, f?.message ?? 'Service internal error: injected by the stand-in');
      }
      authorize(req, url.pathname);
      let body: Record<string, unknown> = {};
      if (raw.trim() !== '') {
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch (err) {
          throw new QdrantHttpError(400, `Format error in JSON body: ${(err as Error).message}`);
        }
      }
      const out = route(method, url.pathname, body) as { result?: unknown; raw?: unknown; text?: string };
      if (out.text !== undefined) send(200, out.text, true);
      else if (out.raw !== undefined) send(200, out.raw);
      else send(200, { result: out.result, status: 'ok', time: time() });
    } catch (err) {
      if (err instanceof QdrantHttpError) {
        if (err.plain) send(err.status, err.message, true);
        else send(err.status, { status: { error: err.message }, time: time() });
      } else send(500, { status: { error: `Service internal error: ${(err as Error).message}` }, time: time() });
    }
  });
  return {
    url: standin.origin,
    collections,
    failNext: (f) => faults.push(f),
    requests,
    stop: standin.close,
  };
}
