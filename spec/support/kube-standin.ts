/**
 * An HTTP server speaking the subset of the Kubernetes API that the worker calls, reached through the real
 * @kubernetes/client-node with a generated kubeconfig:
 *
 *   const kube = await startKubeStandIn();
 *   process.env.KUBECONFIG = kube.kubeconfig;
 *   kube.setCondition({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', namespace: 'smarter', name: 'x' }, 'Ready', 'True');
 *   kube.failNext({ status: 403, method: 'PATCH' });
 *
 * What it does as the API server does: discovery (`/api/v1`, `/apis/<group>/<version>`, which the client's
 * generic KubernetesObjectApi reads first), server-side apply (`PATCH` with `application/apply-patch+yaml`,
 * `fieldManager` required, conflicts between managers unless `force=true`, create or update, `resourceVersion`
 * bumped only on a change, `generation` on a spec change), create (POST), replace (PUT, `resourceVersion`
 * checked), JSON merge patch, GET, LIST with `labelSelector` (items without kind and apiVersion, as real lists),
 * DELETE, Secret `stringData` folded into base64 `data`, and errors as `Status` objects worded as the API server
 * words them (404 NotFound, 409 Conflict or AlreadyExists, 403 Forbidden, 422 Invalid, 400 BadRequest).
 *
 * Every object is validated before it is stored, whoever writes it (a create, a replace, the result of a patch or
 * of an apply, the test API, cert-manager's ingress-shim): against the schema of its kind with
 * spec/support/kube-validate.ts, a kind no package models refused too. A failure is apimachinery's NewInvalid:
 * 422, `reason: Invalid`, `details.causes[]` of `{ reason, message, field }` with the field's path
 * (`spec.rules[0].host`), and the message `Ingress.networking.k8s.io "x" is invalid: <field>: <error>`.
 *
 * cert-manager is played too (unless `certManager: false`): an Ingress annotated `cert-manager.io/cluster-issuer`
 * (or `cert-manager.io/issuer`) gets, as ingress-shim makes them, a Certificate per `spec.tls` entry, named after
 * its `secretName`, not Ready; `issueCertificate(ref)` then does what issuance does: Ready=True and the
 * `kubernetes.io/tls` Secret.
 *
 * Simplifications: one manager's apply replaces what that manager applied before (lists replaced whole, no
 * merge keys); a strategic merge patch is applied as a JSON merge patch; `status` is kept across writes and set
 * only through the test API; unknown fields are not refused (the schemas allow them).
 */
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type KubeFieldError, invalidMessage, validateKubeObject } from './kube-validate.js';
import { readBody, replyJson, startStandin } from './http-standin.js';

export interface KindSpec {
  apiVersion: string;
  kind: string;
  /** Defaults to the lower-case plural of `kind`. */
  plural?: string;
  namespaced?: boolean;
}

export interface StandInRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export type JsonObject = Record<string, unknown>;

export interface InjectedFault {
  status: 403 | 409 | 422 | 500 | 503;
  /** Only requests with this method (GET, PATCH, DELETE). */
  method?: string;
  /** Only requests whose path contains this text. */
  path?: string;
}

export interface KubeStandIn {
  /** `http://127.0.0.1:PORT`. */
  server: string;
  /** Path of a kubeconfig file pointing at this server (token auth, namespace `defaultNamespace`). */
  kubeconfig: string;
  /** The bearer token the kubeconfig carries; other tokens get 401. */
  token: string;
  /** Stored object, as a GET would return it, or undefined. */
  object(ref: StandInRef): JsonObject | undefined;
  /** Creates or replaces an object as another controller would (cert-manager writing a Secret). */
  put(manifest: JsonObject, manager?: string): JsonObject;
  /** Sets a status condition (a Certificate's Ready), bumping resourceVersion. */
  setCondition(
    ref: StandInRef,
    type: string,
    status: 'True' | 'False' | 'Unknown',
    reason?: string,
    message?: string,
  ): void;
  /** Issues a cert-manager Certificate: Ready=True and its TLS Secret (`spec.secretName`) written. */
  issueCertificate(ref: Omit<StandInRef, 'apiVersion' | 'kind'>): void;
  /** The next request matching gets this error instead of being served. */
  failNext(fault: InjectedFault): void;
  /** Every request, as `METHOD path?query`. */
  readonly requests: string[];
  stop(): Promise<void>;
}

const BUILT_IN_KINDS: KindSpec[] = [
  { apiVersion: 'v1', kind: 'Secret' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'v1', kind: 'Service' },
  { apiVersion: 'v1', kind: 'Pod' },
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim' },
  { apiVersion: 'v1', kind: 'Namespace', namespaced: false },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' },
  { apiVersion: 'cert-manager.io/v1', kind: 'Certificate' },
  { apiVersion: 'cert-manager.io/v1', kind: 'Issuer' },
  { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', namespaced: false },
  { apiVersion: 'traefik.io/v1alpha1', kind: 'Middleware' },
];

function pluralOf(kind: string): string {
  const k = kind.toLowerCase();
  if (/(s|x|ch|sh)$/.test(k)) return `${k}es`;
  if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

interface Kind {
  apiVersion: string;
  group: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

interface Stored {
  object: JsonObject;
  /** What each field manager last applied (the fields it owns). */
  applied: Map<string, JsonObject>;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => structuredClone(v);
const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Leaf paths of a manifest (`.spec.rules`), lists counted as leaves, server-owned metadata left out. */
function leaves(o: JsonObject, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(o)) {
    const p = `${prefix}.${k}`;
    if (p === '.apiVersion' || p === '.kind' || p === '.metadata.name' || p === '.metadata.namespace') continue;
    if (isObject(v)) for (const [lp, lv] of leaves(v, p)) out.set(lp, lv);
    else out.set(p, JSON.stringify(v));
  }
  return out;
}

function deepMerge(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(b) && isObject(v) ? deepMerge(b, v) : clone(v);
  }
  return out;
}

/** RFC 7386 JSON merge patch: objects merged, `null` deletes, anything else replaces (lists whole). */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

type Requirement = (labels: Record<string, string>) => boolean;

/** Kubernetes label selectors: `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`, `a notin (x,y)`, comma = and. */
export function parseLabelSelector(selector: string): Requirement[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur.trim() !== '' || parts.length > 0) parts.push(cur);
  const key = '([A-Za-z0-9][-A-Za-z0-9_./]*)';
  return parts.map((raw) => {
    const p = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = new RegExp(`^${key}\\s*(==|=|!=)\\s*([-A-Za-z0-9_.]*)$`).exec(p))) {
      const [, k, op, v] = m as unknown as [string, string, string, string];
      return op === '!=' ? (l) => l[k] !== v : (l) => l[k] === v;
    }
    if ((m = new RegExp(`^${key}\\s+(in|notin)\\s*\\(([^)]*)\\)$`).exec(p))) {
      const [, k, op, list] = m as unknown as [string, string, string, string];
      const values = list.split(',').map((s) => s.trim());
      return op === 'in'
        ? (l) => l[k] !== undefined && values.includes(l[k])
        : (l) => l[k] === undefined || !values.includes(l[k]);
    }
    if ((m = new RegExp(`^!${key}$`).exec(p))) {
      const k = m[1] as string;
      return (l) => l[k] === undefined;
    }
    if ((m = new RegExp(`^${key}$`).exec(p))) {
      const k = m[1] as string;
      return (l) => l[k] !== undefined;
    }
    throw new Error(`unable to parse requirement: found '${p}', expected: identifier`);
  });
}

class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: JsonObject,
  ) {
    super(message);
  }
  status(): JsonObject {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

/** Kubernetes' answer to a method a resource does not take (a collection's DELETE, an item's POST). */
const methodNotAllowed = () => ({
  code: 405,
  body: new ApiError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
  ).status(),
});

export async function startKubeStandIn(
  options: { kinds?: KindSpec[]; defaultNamespace?: string; user?: string; certManager?: boolean } = {},
): Promise<KubeStandIn> {
  const kinds: Kind[] = [...BUILT_IN_KINDS, ...(options.kinds ?? [])].map((k) => ({
    apiVersion: k.apiVersion,
    group: k.apiVersion.includes('/') ? (k.apiVersion.split('/')[0] as string) : '',
    kind: k.kind,
    plural: k.plural ?? pluralOf(k.kind),
    namespaced: k.namespaced ?? true,
  }));
  const defaultNamespace = options.defaultNamespace ?? 'default';
  const user = options.user ?? 'system:serviceaccount:smarter:smarter-worker';
  const token = randomUUID();
  const store = new Map<string, Stored>();
  const faults: InjectedFault[] = [];
  const requests: string[] = [];
  let revision = 1000;

  const keyOf = (k: Kind, namespace: string | undefined, name: string) =>
    `${k.apiVersion}|${k.kind}|${k.namespaced ? (namespace ?? '') : ''}|${name}`;
  const kindOf = (apiVersion: string, kind: string) =>
    kinds.find((k) => k.apiVersion === apiVersion && k.kind === kind);
  /** `secrets` or `ingresses.networking.k8s.io`, as the API server names a resource in its messages. */
  const qualified = (k: Kind) => (k.group ? `${k.plural}.${k.group}` : k.plural);
  const details = (k: Kind, name: string): JsonObject => ({
    name,
    ...(k.group ? { group: k.group } : {}),
    kind: k.plural,
  });
  const notFound = (k: Kind, name: string) =>
    new ApiError(404, 'NotFound', `${qualified(k)} "${name}" not found`, details(k, name));

  /** apimachinery's NewInvalid: 422, reason Invalid, a cause per field error (`field`, `message`, `reason`). */
  const invalid = (k: Kind, name: string, errors: KubeFieldError[]) =>
    new ApiError(422, 'Invalid', invalidMessage(k.group, k.kind, name, errors), {
      name,
      ...(k.group ? { group: k.group } : {}),
      kind: k.kind,
      causes: errors.map((e) => ({ reason: e.reason, message: e.message, field: e.path })),
    });

  /** Every object is checked against its kind's schema before it is stored, as the API server does. */
  function validated(k: Kind, name: string, o: JsonObject): void {
    const result = validateKubeObject(o);
    if (!result.ok) throw invalid(k, name, result.errors);
  }

  function forbidden(k: Kind, verb: string, name: string, namespace: string | undefined): ApiError {
    const where = k.namespaced && namespace ? ` in the namespace "${namespace}"` : '';
    const subject = name ? `${qualified(k)} "${name}" is forbidden` : `${qualified(k)} is forbidden`;
    return new ApiError(
      403,
      'Forbidden',
      `${subject}: User "${user}" cannot ${verb} resource "${k.plural}" in API group "${k.group}"${where}`,
      details(k, name),
    );
  }

  function stamp(stored: Stored, previous: JsonObject | undefined): JsonObject {
    const o = stored.object;
    const meta = (o.metadata ??= {}) as JsonObject;
    const prevMeta = (previous?.metadata ?? {}) as JsonObject;
    const comparable = (x: JsonObject | undefined) => {
      if (!x) return undefined;
      const { metadata, ...rest } = x;
      const {
        resourceVersion: _r,
        generation: _g,
        managedFields: _m,
        uid: _u,
        creationTimestamp: _c,
        ...m
      } = (metadata ?? {}) as JsonObject;
      return JSON.stringify({ ...rest, metadata: m });
    };
    meta.uid = prevMeta.uid ?? randomUUID();
    meta.creationTimestamp = prevMeta.creationTimestamp ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const changed = comparable(previous) !== comparable(o);
    meta.resourceVersion = changed ? String(++revision) : prevMeta.resourceVersion;
    const specChanged = JSON.stringify(previous?.spec) !== JSON.stringify(o.spec);
    meta.generation = previous ? Number(prevMeta.generation ?? 1) + (specChanged ? 1 : 0) : 1;
    meta.managedFields = [...stored.applied.keys()].map((manager) => ({
      manager,
      operation: 'Apply',
      apiVersion: o.apiVersion,
      fieldsType: 'FieldsV1',
    }));
    return o;
  }

  function foldSecret(k: Kind, o: JsonObject): void {
    if (k.apiVersion !== 'v1' || k.kind !== 'Secret') return;
    const name = str((o.metadata as JsonObject | undefined)?.name);
    const data = isObject(o.data) ? { ...o.data } : {};
    for (const [key, v] of Object.entries(data)) {
      if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) {
        throw new ApiError(
          422,
          'Invalid',
          `Secret "${name}" is invalid: data[${key}]: Invalid value: "<secret contents redacted>": illegal base64 data`,
          {
            name,
            kind: 'Secret',
            causes: [
              {
                reason: 'FieldValueInvalid',
                message: 'Invalid value: "<secret contents redacted>": illegal base64 data',
                field: `data[${key}]`,
              },
            ],
          },
        );
      }
    }
    if (isObject(o.stringData)) {
      for (const [key, v] of Object.entries(o.stringData)) data[key] = Buffer.from(String(v)).toString('base64');
      delete o.stringData;
    }
    if (Object.keys(data).length > 0) o.data = data;
    o.type ??= 'Opaque';
  }

  function apply(
    k: Kind,
    namespace: string | undefined,
    urlName: string,
    body: unknown,
    manager: string | null,
    force: boolean,
  ): { object: JsonObject; created: boolean } {
    if (!manager) {
      throw new ApiError(
        422,
        'Invalid',
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
        {
          group: 'meta.k8s.io',
          kind: 'PatchOptions',
          causes: [
            {
              reason: 'FieldValueRequired',
              message: 'Required value: is required for apply patch',
              field: 'fieldManager',
            },
          ],
        },
      );
    }
    if (!isObject(body) || !isObject(body.metadata)) {
      throw new ApiError(400, 'BadRequest', 'error decoding patch: the body is not an object with metadata');
    }
    if (body.apiVersion !== k.apiVersion || body.kind !== k.kind) {
      throw new ApiError(
        400,
        'BadRequest',
        `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${k.apiVersion})`,
      );
    }
    const name = str(body.metadata.name);
    if (!DNS1123.test(name) || name.length > 253) {
      const msg = `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
      throw invalid(k, name, [{ path: 'metadata.name', message: msg, reason: 'FieldValueInvalid' }]);
    }
    if (name !== urlName) {
      throw new ApiError(
        400,
        'BadRequest',
        `the name of the object (${name}) does not match the name on the URL (${urlName})`,
      );
    }
    const key = keyOf(k, namespace, name);
    const existing = store.get(key);
    const applied = clone(body);
    if (k.namespaced) (applied.metadata as JsonObject).namespace = namespace;
    if (existing && !force) {
      const mine = leaves(applied);
      const conflicts: Array<{ manager: string; field: string }> = [];
      for (const [other, theirs] of existing.applied) {
        if (other === manager) continue;
        for (const [field, value] of leaves(theirs)) {
          const v = mine.get(field);
          if (v !== undefined && v !== value) conflicts.push({ manager: other, field });
        }
      }
      if (conflicts.length > 0) {
        const n = conflicts.length;
        const list = conflicts.map((c) => `conflict with "${c.manager}": ${c.field}`).join('\n- ');
        throw new ApiError(
          409,
          'Conflict',
          `Apply failed with ${n} conflict${n === 1 ? '' : 's'}: ${n === 1 ? list : `\n- ${list}`}`,
          {
            causes: conflicts.map((c) => ({
              reason: 'FieldManagerConflict',
              message: `conflict with "${c.manager}" using ${k.apiVersion}`,
              field: c.field,
            })),
          },
        );
      }
    }
    const appliedBy = new Map(existing?.applied ?? []);
    appliedBy.set(manager, applied);
    // Every manager's fields, the later over the earlier, this manager's last; status lives apart.
    let merged: JsonObject = {};
    for (const [m, a] of appliedBy) if (m !== manager) merged = deepMerge(merged, a);
    merged = deepMerge(merged, applied);
    if (existing?.object.status !== undefined && applied.status === undefined) {
      merged.status = clone(existing.object.status);
    }
    const meta = merged.metadata as JsonObject;
    const prevMeta = (existing?.object.metadata ?? {}) as JsonObject;
    for (const f of ['uid', 'creationTimestamp', 'resourceVersion', 'generation']) {
      if (prevMeta[f] !== undefined) meta[f] = prevMeta[f];
    }
    foldSecret(k, merged);
    validated(k, name, merged);
    const stored: Stored = { object: merged, applied: appliedBy };
    stamp(stored, existing?.object);
    store.set(key, stored);
    if (options.certManager !== false) ingressShim(k, merged);
    return { object: clone(merged), created: !existing };
  }

  /** The request body of a create or replace: an object of the URL's kind, in the URL's namespace. */
  function wholeObject(k: Kind, namespace: string | undefined, body: unknown): JsonObject {
    if (!isObject(body)) throw new ApiError(400, 'BadRequest', 'the body of the request is not a JSON object');
    if (body.apiVersion !== k.apiVersion || body.kind !== k.kind) {
      throw new ApiError(
        400,
        'BadRequest',
        `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${k.apiVersion})`,
      );
    }
    const meta = isObject(body.metadata) ? body.metadata : {};
    if (k.namespaced && meta.namespace !== undefined && meta.namespace !== namespace) {
      throw new ApiError(
        400,
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    return body;
  }

  /**
   * Stores `object` as a create, a replace or a merge patch's result writes it: whole, validated first, `status`
   * and the server's metadata kept from what was stored (the main resource does not write them).
   */
  function write(
    k: Kind,
    namespace: string | undefined,
    name: string,
    object: JsonObject,
    manager: string,
  ): JsonObject {
    const key = keyOf(k, namespace, name);
    const existing = store.get(key);
    const o = clone(object);
    const meta: JsonObject = isObject(o.metadata) ? o.metadata : (o.metadata = {});
    meta.name = name;
    if (k.namespaced) meta.namespace = namespace;
    else delete meta.namespace;
    delete o.status;
    if (existing?.object.status !== undefined) o.status = clone(existing.object.status);
    const prevMeta = (existing?.object.metadata ?? {}) as JsonObject;
    for (const f of ['uid', 'creationTimestamp', 'resourceVersion', 'generation', 'managedFields']) {
      if (prevMeta[f] !== undefined) meta[f] = prevMeta[f];
      else delete meta[f];
    }
    foldSecret(k, o);
    validated(k, name, o);
    const applied = new Map(existing?.applied ?? []);
    applied.set(manager, clone(object));
    const stored: Stored = { object: o, applied };
    stamp(stored, existing?.object);
    store.set(key, stored);
    if (options.certManager !== false) ingressShim(k, o);
    return clone(o);
  }

  /** cert-manager's ingress-shim: a Certificate for each TLS secret of an annotated Ingress, if there is none. */
  function ingressShim(k: Kind, ingress: JsonObject): void {
    if (k.apiVersion !== 'networking.k8s.io/v1' || k.kind !== 'Ingress') return;
    const meta = ingress.metadata as JsonObject;
    const annotations = (meta.annotations ?? {}) as Record<string, string>;
    const clusterIssuer = annotations['cert-manager.io/cluster-issuer'];
    const issuer = clusterIssuer ?? annotations['cert-manager.io/issuer'];
    if (!issuer) return;
    const certificate = kindOf('cert-manager.io/v1', 'Certificate') as Kind;
    const namespace = str(meta.namespace) || undefined;
    const tls = ((ingress.spec as JsonObject | undefined)?.tls ?? []) as Array<{
      hosts?: string[];
      secretName?: string;
    }>;
    for (const t of tls) {
      if (!t.secretName || store.has(keyOf(certificate, namespace, t.secretName))) continue;
      apply(
        certificate,
        namespace,
        t.secretName,
        {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Certificate',
          metadata: {
            name: t.secretName,
            namespace,
            ownerReferences: [
              { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: meta.name, uid: meta.uid, controller: true },
            ],
          },
          spec: {
            secretName: t.secretName,
            dnsNames: t.hosts ?? [],
            issuerRef: { name: issuer, kind: clusterIssuer ? 'ClusterIssuer' : 'Issuer', group: 'cert-manager.io' },
          },
          status: {
            conditions: [
              {
                type: 'Ready',
                status: 'False',
                reason: 'DoesNotExist',
                message: 'Issuing certificate as Secret does not exist',
              },
            ],
          },
        },
        'cert-manager-ingress-shim',
        true,
      );
    }
  }

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
          metadata: { resourceVersion: String(revision) },
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

  const standin = await startStandin(
    async (req, res) => {
      requests.push(`${req.method} ${req.url}`);
      const { code, body } = await serve(req);
      replyJson(res, code, body);
    },
    {
      onError: (res, err) =>
        replyJson(res, 500, new ApiError(500, 'InternalError', `Internal error occurred: ${String(err)}`).status()),
    },
  );
  const serverUrl = standin.origin;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-standin-'));
  const kubeconfig = path.join(dir, 'kubeconfig.json');
  // JSON is YAML: the client's loader reads it as a kubeconfig.
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // The client refuses plain HTTP unless TLS verification is off; the stand-in speaks HTTP on loopback.
      clusters: [{ name: 'stand-in', cluster: { server: serverUrl, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'smarter-worker', user: { token } }],
      contexts: [
        { name: 'stand-in', context: { cluster: 'stand-in', user: 'smarter-worker', namespace: defaultNamespace } },
      ],
      'current-context': 'stand-in',
    }),
  );

  const kindOrThrow = (ref: { apiVersion: string; kind: string }) => {
    const k = kindOf(ref.apiVersion, ref.kind);
    if (!k) throw new Error(`the stand-in does not serve ${ref.apiVersion} ${ref.kind}; pass it in options.kinds`);
    return k;
  };
  const standIn: KubeStandIn = {
    server: serverUrl,
    kubeconfig,
    token,
    object(ref) {
      const s = store.get(keyOf(kindOrThrow(ref), ref.namespace ?? defaultNamespace, ref.name));
      return s ? clone(s.object) : undefined;
    },
    put(manifest, manager = 'test-controller') {
      const k = kindOrThrow(manifest as { apiVersion: string; kind: string });
      const meta = (manifest.metadata ?? {}) as JsonObject;
      const namespace = k.namespaced ? str(meta.namespace) || defaultNamespace : undefined;
      return apply(k, namespace, str(meta.name), manifest, manager, true).object;
    },
    setCondition(ref, type, status, reason = status === 'True' ? 'Ready' : 'Pending', message = '') {
      const k = kindOrThrow(ref);
      const s = store.get(keyOf(k, ref.namespace ?? defaultNamespace, ref.name));
      if (!s) throw new Error(`no ${ref.kind} ${ref.namespace ?? defaultNamespace}/${ref.name} to set a condition on`);
      const previous = clone(s.object);
      const st = isObject(s.object.status) ? s.object.status : {};
      const conditions = (Array.isArray(st.conditions) ? st.conditions : []) as JsonObject[];
      const condition = {
        type,
        status,
        reason,
        message,
        lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        observedGeneration: (s.object.metadata as JsonObject).generation,
      };
      st.conditions = [...conditions.filter((c) => c.type !== type), condition];
      s.object.status = st;
      const result = validateKubeObject(s.object);
      if (!result.ok) {
        s.object = previous;
        throw new Error(`setCondition: ${JSON.stringify(result.errors)}`);
      }
      stamp(s, previous);
    },
    issueCertificate(ref) {
      const full = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', ...ref };
      standIn.setCondition(full, 'Ready', 'True', 'Ready', 'Certificate is up to date and has not expired');
      const cert = standIn.object(full) as JsonObject;
      const secretName = str((cert.spec as JsonObject | undefined)?.secretName) || ref.name;
      const namespace = ref.namespace ?? defaultNamespace;
      standIn.put(
        {
          apiVersion: 'v1',
          kind: 'Secret',
          type: 'kubernetes.io/tls',
          metadata: { name: secretName, namespace, annotations: { 'cert-manager.io/certificate-name': ref.name } },
          stringData: {
            'tls.crt': '-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n',
            'tls.key': '-----BEGIN PRIVATE KEY-----\nstand-in\n-----END PRIVATE KEY-----\n',
          },
        },
        'cert-manager-certificates-issuing',
      );
    },
    failNext(fault) {
      faults.push(fault);
    },
    requests,
    stop: async () => {
      await standin.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return standIn;
}
