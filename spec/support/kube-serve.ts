/**
 * The HTTP side of the Kubernetes stand-in (kube-standin.ts): token auth, discovery, routing, injected faults, and
 * each verb (GET, LIST with `labelSelector`, POST, PUT, DELETE, merge patch, server-side apply) on a `KubeStore`.
 */
import type http from 'node:http';
import { readBody } from './http-standin.js';
import {
  ApiError,
  type InjectedFault,
  type JsonObject,
  type Kind,
  type Requirement,
  clone,
  isObject,
  mergePatch,
  methodNotAllowed,
  parseLabelSelector,
  str,
} from './kube-objects.js';
import type { KubeStore } from './kube-store.js';

/** Answers one request from what `kube` stores; `faults` are consumed as requests match them. */
export function kubeServer(
  kube: KubeStore,
  token: string,
  faults: InjectedFault[],
): (req: http.IncomingMessage) => Promise<{ code: number; body: JsonObject }> {
  const { kinds, store, keyOf, qualified, details, notFound, invalid, forbidden, apply, wholeObject, write } = kube;
  function route(
    req: http.IncomingMessage,
    url: URL,
  ): { k: Kind; namespace: string | undefined; name: string | undefined } | { discovery: string } | null {
    const segs = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    let apiVersion: string;
    let rest: string[];
    if (segs[0] === 'api' && segs[1]) {
      apiVersion = segs[1];
      rest = segs.slice(2);
    } else if (segs[0] === 'apis' && segs[1] && segs[2]) {
      apiVersion = `${segs[1]}/${segs[2]}`;
      rest = segs.slice(3);
    } else return null;
    if (rest.length === 0) return req.method === 'GET' ? { discovery: apiVersion } : null;
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const k = kinds.find((x) => x.apiVersion === apiVersion && x.plural === rest[0]);
    if (!k) return null;
    return { k, namespace, name: rest[1] };
  }

  /** The body of a create, replace or merge patch: JSON (the stand-in reads no YAML or protobuf), else a 400. */
  function parseJson(text: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ApiError(400, 'BadRequest', 'error decoding the body: the stand-in accepts JSON only');
    }
  }

  async function serve(req: http.IncomingMessage): Promise<{ code: number; body: JsonObject }> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const method = req.method ?? 'GET';
    if (req.headers.authorization !== `Bearer ${token}`) {
      return { code: 401, body: new ApiError(401, 'Unauthorized', 'Unauthorized').status() };
    }
    const r = route(req, url);
    if (r === null) {
      return {
        code: 404,
        body: new ApiError(404, 'NotFound', 'the server could not find the requested resource').status(),
      };
    }
    if ('discovery' in r) {
      const served = kinds.filter((k) => k.apiVersion === r.discovery);
      if (served.length === 0) {
        return {
          code: 404,
          body: new ApiError(404, 'NotFound', 'the server could not find the requested resource').status(),
        };
      }
      return {
        code: 200,
        body: {
          kind: 'APIResourceList',
          apiVersion: 'v1',
          groupVersion: r.discovery,
          resources: served.map((k) => ({
            name: k.plural,
            singularName: k.kind.toLowerCase(),
            namespaced: k.namespaced,
            kind: k.kind,
            verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
          })),
        },
      };
    }
    const { k, namespace, name } = r;
    const fault = faults.findIndex(
      (f) => (f.method === undefined || f.method === method) && (f.path === undefined || url.pathname.includes(f.path)),
    );
    if (fault >= 0) {
      const f = faults.splice(fault, 1)[0] as InjectedFault;
      const verb =
        { GET: name ? 'get' : 'list', PATCH: 'patch', DELETE: 'delete', POST: 'create', PUT: 'update' }[method] ??
        method.toLowerCase();
      const err =
        f.status === 403
          ? forbidden(k, verb, name ?? '', namespace)
          : f.status === 409
            ? new ApiError(
                409,
                'Conflict',
                `Operation cannot be fulfilled on ${qualified(k)} "${name ?? ''}": the object has been modified; please apply your changes to the latest version and try again`,
                details(k, name ?? ''),
              )
            : f.status === 422
              ? invalid(k, name ?? '', [
                  { path: 'spec', message: 'Invalid value: injected by the stand-in', reason: 'FieldValueInvalid' },
                ])
              : new ApiError(
                  f.status,
                  f.status === 503 ? 'ServiceUnavailable' : 'InternalError',
                  f.status === 503
                    ? 'the server is currently unable to handle the request'
                    : 'Internal error occurred: injected by the stand-in',
                );
      return { code: f.status, body: err.status() };
    }
    if (method === 'GET' && name === undefined) {
      const selector = url.searchParams.get('labelSelector');
      let requirements: Requirement[] = [];
      try {
        requirements = selector ? parseLabelSelector(selector) : [];
      } catch (err) {
        return { code: 400, body: new ApiError(400, 'BadRequest', (err as Error).message).status() };
      }
      const items = [...store.values()]
        .map((s) => s.object)
        .filter((o) => o.apiVersion === k.apiVersion && o.kind === k.kind)
        .filter((o) => !k.namespaced || namespace === undefined || (o.metadata as JsonObject).namespace === namespace)
        .filter((o) =>
          requirements.every((req) => req(((o.metadata as JsonObject).labels ?? {}) as Record<string, string>)),
        )
        .map((o) => {
          const { apiVersion: _a, kind: _k, ...item } = clone(o);
          return item;
        });
      return {
        code: 200,
        body: {
          kind: `${k.kind}List`,
          apiVersion: k.apiVersion,
          metadata: { resourceVersion: String(kube.revision) },
          items,
        },
      };
    }
    const manager = url.searchParams.get('fieldManager') ?? 'stand-in-client';
    const answer = async (run: () => Promise<{ code: number; body: JsonObject }>) => {
      try {
        return await run();
      } catch (err) {
        if (err instanceof ApiError) return { code: err.code, body: err.status() };
        throw err;
      }
    };
    if (method === 'POST' && name === undefined) {
      return answer(async () => {
        const o = wholeObject(k, namespace, parseJson((await readBody(req)).toString('utf8')));
        const n = str((o.metadata as JsonObject | undefined)?.name);
        if (n === '') {
          throw invalid(k, '', [
            {
              path: 'metadata.name',
              message: 'Required value: name or generateName is required',
              reason: 'FieldValueRequired',
            },
          ]);
        }
        if (store.has(keyOf(k, namespace, n))) {
          throw new ApiError(409, 'AlreadyExists', `${qualified(k)} "${n}" already exists`, details(k, n));
        }
        return { code: 201, body: write(k, namespace, n, o, manager) };
      });
    }
    if (name === undefined) {
      return methodNotAllowed();
    }
    const key = keyOf(k, namespace, name);
    if (method === 'GET') {
      const s = store.get(key);
      return s ? { code: 200, body: clone(s.object) } : { code: 404, body: notFound(k, name).status() };
    }
    if (method === 'DELETE') {
      const s = store.get(key);
      if (!s) return { code: 404, body: notFound(k, name).status() };
      store.delete(key);
      return { code: 200, body: clone(s.object) };
    }
    if (method === 'PUT') {
      return answer(async () => {
        const o = wholeObject(k, namespace, parseJson((await readBody(req)).toString('utf8')));
        const s = store.get(key);
        if (!s) throw notFound(k, name);
        const meta = (o.metadata ?? {}) as JsonObject;
        if (meta.name !== undefined && meta.name !== name) {
          throw new ApiError(
            400,
            'BadRequest',
            `the name of the object (${str(meta.name)}) does not match the name on the URL (${name})`,
          );
        }
        const rv = meta.resourceVersion;
        if (rv !== undefined && rv !== (s.object.metadata as JsonObject).resourceVersion) {
          throw new ApiError(
            409,
            'Conflict',
            `Operation cannot be fulfilled on ${qualified(k)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
            details(k, name),
          );
        }
        return { code: 200, body: write(k, namespace, name, o, manager) };
      });
    }
    if (method === 'PATCH') {
      const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim();
      const text = (await readBody(req)).toString('utf8');
      if (type === 'application/merge-patch+json' || type === 'application/strategic-merge-patch+json') {
        return answer(async () => {
          const patch = parseJson(text);
          const s = store.get(key);
          if (!s) throw notFound(k, name);
          if (!isObject(patch)) throw new ApiError(400, 'BadRequest', 'the patch is not a JSON object');
          const { status: _status, ...current } = clone(s.object);
          return { code: 200, body: write(k, namespace, name, mergePatch(current, patch) as JsonObject, manager) };
        });
      }
      if (type !== 'application/apply-patch+yaml') {
        return {
          code: 415,
          body: new ApiError(
            415,
            'UnsupportedMediaType',
            `the body of the request was in an unknown format - accepted media types include: application/apply-patch+yaml, application/merge-patch+json, application/strategic-merge-patch+json (got ${type})`,
          ).status(),
        };
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return {
          code: 400,
          body: new ApiError(
            400,
            'BadRequest',
            'error decoding YAML: the stand-in accepts the JSON form of YAML only',
          ).status(),
        };
      }
      try {
        const { object, created } = apply(
          k,
          namespace,
          name,
          body,
          url.searchParams.get('fieldManager'),
          url.searchParams.get('force') === 'true',
        );
        return { code: created ? 201 : 200, body: object };
      } catch (err) {
        if (err instanceof ApiError) return { code: err.code, body: err.status() };
        throw err;
      }
    }
    return methodNotAllowed();
  }
  return serve;
}
