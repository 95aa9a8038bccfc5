/**
 * An HTTPS server speaking the subset of Pinecone's API (version 2026-04) that the worker's real client
 * (@pinecone-database/pinecone) calls, on loopback:
 *
 *   const pinecone = await startPineconeStandIn({ apiKey: 'pk' });
 *   new Pinecone({ apiKey: 'pk', controllerHostUrl: pinecone.controllerUrl, fetchApi: pinecone.fetch });
 *
 * As Pinecone does: a control plane (`GET/POST /indexes`, `GET/DELETE /indexes/{name}`, backups:
 * `POST/GET /indexes/{name}/backups`, `GET/DELETE /backups/{id}`) and, for each index, its own data plane whose
 * `host` `describe_index` names (a bare `host:port`, to which the client prefixes `https://`, hence TLS with a
 * test CA that `fetch` trusts): `POST /vectors/upsert`, `POST /query`, `POST /vectors/delete` (ids, filter or
 * deleteAll), `GET /vectors/fetch`, `POST /describe_index_stats`, `GET /namespaces`. The key is required in
 * `Api-Key` (401 otherwise). Errors are shaped as Pinecone shapes them: the control plane's
 * `{error: {code, message}, status}`, the data plane's gRPC-style `{code, message, details}`, with Pinecone's
 * wording for a missing index, an existing one, a vector of the wrong dimension and metadata it refuses. The
 * default namespace is `""` in requests and `__default__` in stats and listings, as the 2025-04 API and later
 * show it. Filters: Pinecone's metadata filter language (`$eq $ne $gt $gte $lt $lte $in $nin $exists $and $or`).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import { type TestCa, makeTestCa } from './tls.js';
import { type StandinServer, readBody, replyJson, startStandin } from './http-standin.js';
import { type StoredIndex, PineconeHttpError, answerData, bad } from './pinecone-data-plane.js';

export type { Metadata, StoredIndex, StoredRecord } from './pinecone-data-plane.js';

export interface StoredBackup {
  backup_id: string;
  source_index_name: string;
  source_index_id: string;
  name: string;
  description: string;
  status: string;
  cloud: string;
  region: string;
  dimension: number;
  metric: string;
  record_count: number;
  namespace_count: number;
  size_bytes: number;
  tags: Record<string, string>;
  created_at: string;
}

export interface PineconeFault {
  status: number;
  /** Matched against `METHOD /path` (the data plane's path is prefixed with `<index>:`); any request when absent. */
  path?: RegExp;
  message?: string;
}

export type FetchLike = (
  url: string,
  init?: { method?: string; headers?: unknown; body?: unknown; signal?: AbortSignal | null },
) => Promise<Response>;

export interface PineconeStandIn {
  /** `https://127.0.0.1:PORT`: the client's `controllerHostUrl`. */
  controllerUrl: string;
  /** A fetch that trusts the stand-in's certificate: the client's `fetchApi`. */
  fetch: FetchLike;
  readonly indexes: Map<string, StoredIndex>;
  readonly backups: Map<string, StoredBackup>;
  /** The status a new backup is created with (`Ready` unless a test says `Initializing`). */
  backupStatus: string;
  /** The next request matching gets this error instead of being served. */
  failNext(fault: PineconeFault): void;
  /** Every request, as `METHOD /path` on the control plane and `<index>: METHOD /path` on a data plane. */
  readonly requests: string[];
  /** The `Api-Key` of every request, in order. */
  readonly keys: string[];
  stop(): Promise<void>;
}

const GRPC_CODES: Record<number, number> = { 400: 3, 401: 16, 403: 7, 404: 5, 409: 6, 429: 8, 500: 13, 503: 14 };
const HTTP_CODES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'ALREADY_EXISTS',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

const indexModel = (ix: StoredIndex) => ({
  name: ix.name,
  vector_type: 'dense',
  metric: ix.metric,
  dimension: ix.dimension,
  status: ix.status,
  host: ix.host,
  spec: {
    serverless: { cloud: ix.cloud, region: ix.region, read_capacity: { mode: 'OnDemand', status: { state: 'Ready' } } },
  },
  deletion_protection: ix.deletionProtection,
  tags: ix.tags,
});

/** A fetch over node:https that trusts `caFile`, shaped as the client's generated runtime calls it. */
export function trustingFetch(caFile: string): FetchLike {
  const ca = fs.readFileSync(caFile);
  return (url, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const headers: Record<string, string> = {};
      const given = init.headers;
      if (given instanceof Headers) given.forEach((v, k) => (headers[k] = v));
      else if (given && typeof given === 'object') {
        for (const [k, v] of Object.entries(given as Record<string, unknown>)) {
          if (typeof v === 'string') headers[k] = v;
        }
      }
      // The client sends JSON text; a body of another kind is not one it sends.
      if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') {
        return reject(new TypeError('the stand-in fetch sends string bodies only'));
      }
      const body = init.body ?? undefined;
      const req = https.request(url, { method: init.method ?? 'GET', headers, ca }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const status = res.statusCode ?? 500;
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
          const payload = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          const response = new Response(payload, { status, headers: h });
          Object.defineProperty(response, 'url', { value: url });
          resolve(response);
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      const signal = init.signal;
      if (signal) {
        if (signal.aborted) req.destroy(signal.reason as Error);
        else signal.addEventListener('abort', () => req.destroy(signal.reason as Error), { once: true });
      }
      if (body !== undefined) req.write(body);
      req.end();
    });
}

export async function startPineconeStandIn(options: { apiKey: string; ca?: TestCa }): Promise<PineconeStandIn> {
  const ca = options.ca ?? (await makeTestCa('pinecone'));
  const ownCa = options.ca ? undefined : ca;
  const { certFile, keyFile } = await ca.issue(`pinecone-${randomUUID().slice(0, 8)}`, {
    altNames: ['IP:127.0.0.1', 'DNS:localhost'],
  });
  const tls = { cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) };
  const indexes = new Map<string, StoredIndex>();
  const backups = new Map<string, StoredBackup>();
  const servers = new Map<string, StandinServer>();
  const faults: PineconeFault[] = [];
  const requests: string[] = [];
  const keys: string[] = [];
  const standIn = { backupStatus: 'Ready' };

  const index = (name: string): StoredIndex => {
    const ix = indexes.get(name);
    if (!ix) throw new PineconeHttpError(404, 'NOT_FOUND', `Resource ${name} not found`);
    return ix;
  };

  function control(method: string, path: string, body: Record<string, unknown>): [number, unknown] {
    if (path === '/indexes' && method === 'GET') return [200, { indexes: [...indexes.values()].map(indexModel) }];
    if (path === '/indexes' && method === 'POST') throw new Error('createIndex is served asynchronously');
    const m = /^\/indexes\/([^/]+)(\/backups)?$/.exec(path);
    if (m) {
      const name = decodeURIComponent(m[1] ?? '');
      if (!m[2] && method === 'GET') return [200, indexModel(index(name))];
      if (!m[2] && method === 'DELETE') {
        const ix = index(name);
        if (ix.deletionProtection === 'enabled') {
          throw new PineconeHttpError(
            403,
            'FORBIDDEN',
            `Deletion protection is enabled for this index. Disable deletion protection before retrying.`,
          );
        }
        indexes.delete(name);
        const server = servers.get(name);
        servers.delete(name);
        void server?.close();
        return [202, null];
      }
      if (m[2] && method === 'POST') {
        const ix = index(name);
        const records = [...ix.namespaces.values()].reduce((n, ns) => n + ns.size, 0);
        const b: StoredBackup = {
          backup_id: randomUUID(),
          source_index_name: name,
          source_index_id: `${name}-id`,
          name: typeof body.name === 'string' ? body.name : '',
          description: typeof body.description === 'string' ? body.description : '',
          status: standIn.backupStatus,
          cloud: ix.cloud,
          region: ix.region,
          dimension: ix.dimension,
          metric: ix.metric,
          record_count: records,
          namespace_count: ix.namespaces.size,
          size_bytes: records * (ix.dimension * 4 + 64),
          tags: ix.tags,
          created_at: new Date().toISOString(),
        };
        backups.set(b.backup_id, b);
        return [201, b];
      }
      if (m[2] && method === 'GET') {
        index(name);
        return [200, { data: [...backups.values()].filter((b) => b.source_index_name === name), pagination: null }];
      }
    }
    const b = /^\/backups\/([^/]+)$/.exec(path);
    if (b) {
      const id = decodeURIComponent(b[1] ?? '');
      const backup = backups.get(id);
      if (!backup) throw new PineconeHttpError(404, 'NOT_FOUND', `Backup ${id} not found`);
      if (method === 'GET') return [200, backup];
      if (method === 'DELETE') {
        backups.delete(id);
        return [202, null];
      }
    }
    throw new PineconeHttpError(404, 'NOT_FOUND', `Not found: ${method} ${path}`);
  }

  async function createIndex(body: Record<string, unknown>): Promise<[number, unknown]> {
    const name = body.name;
    if (typeof name !== 'string' || !/^[a-z0-9]([a-z0-9-]{0,43}[a-z0-9])?$/.test(name)) {
      throw bad(
        `Name must consist of lower case alphanumeric characters or '-', start and end with an alphanumeric character, and be 1 to 45 characters long`,
      );
    }
    const dimension = body.dimension;
    if (typeof dimension !== 'number' || !Number.isInteger(dimension) || dimension < 1 || dimension > 20000) {
      throw bad('Dimension must be an integer between 1 and 20000');
    }
    const metric = body.metric ?? 'cosine';
    if (metric !== 'cosine' && metric !== 'euclidean' && metric !== 'dotproduct') {
      throw bad(`Metric must be one of cosine, euclidean or dotproduct`);
    }
    const serverless = (body.spec as { serverless?: { cloud?: unknown; region?: unknown } } | undefined)?.serverless;
    if (!serverless || typeof serverless.cloud !== 'string' || typeof serverless.region !== 'string') {
      throw bad('This stand-in creates serverless indexes only: spec.serverless needs cloud and region');
    }
    if (indexes.has(name)) throw new PineconeHttpError(409, 'ALREADY_EXISTS', 'Resource  already exists');
    const server = await dataPlane(name);
    const ix: StoredIndex = {
      name,
      dimension,
      metric,
      deletionProtection: body.deletion_protection === 'enabled' ? 'enabled' : 'disabled',
      tags: (body.tags ?? {}) as Record<string, string>,
      cloud: serverless.cloud,
      region: serverless.region,
      status: { ready: true, state: 'Ready' },
      host: `127.0.0.1:${server.port}`,
      namespaces: new Map(),
    };
    indexes.set(name, ix);
    return [201, indexModel(ix)];
  }

  function handler(plane: string | null) {
    return async (req: http.IncomingMessage, res: http.ServerResponse) => {
      const raw = (await readBody(req)).toString('utf8');
      const url = new URL(req.url ?? '/', 'https://stand-in');
      const method = req.method ?? 'GET';
      const label = `${plane === null ? '' : `${plane}: `}${method} ${url.pathname}`;
      requests.push(label);
      const send = (status: number, payload: unknown) => {
        if (payload === null) res.writeHead(status).end();
        else replyJson(res, status, payload);
      };
      const fail = (err: PineconeHttpError) =>
        plane === null
          ? send(err.status, { error: { code: err.code, message: err.message }, status: err.status })
          : send(err.status, { code: GRPC_CODES[err.status] ?? 2, message: err.message, details: [] });
      try {
        const i = faults.findIndex((f) => !f.path || f.path.test(label));
        if (i >= 0) {
          const [f] = faults.splice(i, 1);
          const status = f?.status ?? 500;
          throw new PineconeHttpError(
            status,
            HTTP_CODES[status] ?? 'UNKNOWN',
            f?.message ?? 'Internal error: injected by the stand-in',
          );
        }
        const key = req.headers['api-key'];
        keys.push(typeof key === 'string' ? key : '');
        if (key !== options.apiKey) throw new PineconeHttpError(401, 'UNAUTHENTICATED', 'Invalid API Key');
        let body: Record<string, unknown> = {};
        if (raw.trim() !== '') {
          try {
            body = JSON.parse(raw) as Record<string, unknown>;
          } catch (err) {
            throw bad(`Invalid request body: ${(err as Error).message}`);
          }
        }
        const [status, payload] =
          plane !== null
            ? answerData(index(plane), method, url.pathname, url.searchParams, body)
            : url.pathname === '/indexes' && method === 'POST'
              ? await createIndex(body)
              : control(method, url.pathname, body);
        send(status, payload);
      } catch (err) {
        if (err instanceof PineconeHttpError) fail(err);
        else fail(new PineconeHttpError(500, 'INTERNAL', `Internal error: ${(err as Error).message}`));
      }
    };
  }

  const listen = (plane: string | null) => startStandin(handler(plane), { tls });

  async function dataPlane(name: string): Promise<StandinServer> {
    const server = await listen(name);
    servers.set(name, server);
    return server;
  }

  const controlServer = await listen(null);
  return {
    controllerUrl: controlServer.origin,
    fetch: trustingFetch(ca.caFile),
    indexes,
    backups,
    get backupStatus() {
      return standIn.backupStatus;
    },
    set backupStatus(s: string) {
      standIn.backupStatus = s;
    },
    failNext: (f) => faults.push(f),
    requests,
    keys,
    async stop() {
      for (const s of [controlServer, ...servers.values()]) await s.close();
      ownCa?.remove();
    },
  };
}
