/**
 * What the Kubernetes stand-in (kube-standin.ts) keeps and how it writes it: server-side apply with field managers,
 * create and replace, every object validated against its kind's schema first, Secrets folded, and cert-manager's
 * ingress-shim.
 */
import { randomUUID } from 'node:crypto';
import { type KubeFieldError, invalidMessage, validateKubeObject } from './kube-validate.js';
import {
  ApiError,
  BUILT_IN_KINDS,
  DNS1123,
  type JsonObject,
  type Kind,
  type KindSpec,
  type Stored,
  clone,
  deepMerge,
  isObject,
  leaves,
  pluralOf,
  str,
} from './kube-objects.js';

export interface KubeStoreOptions {
  kinds?: KindSpec[];
  defaultNamespace?: string;
  user?: string;
  certManager?: boolean;
}

export type KubeStore = ReturnType<typeof createKubeStore>;

export function createKubeStore(options: KubeStoreOptions = {}) {
  const kinds: Kind[] = [...BUILT_IN_KINDS, ...(options.kinds ?? [])].map((k) => ({
    apiVersion: k.apiVersion,
    group: k.apiVersion.includes('/') ? (k.apiVersion.split('/')[0] as string) : '',
    kind: k.kind,
    plural: k.plural ?? pluralOf(k.kind),
    namespaced: k.namespaced ?? true,
  }));
  const defaultNamespace = options.defaultNamespace ?? 'default';
  const user = options.user ?? 'system:serviceaccount:smarter:smarter-worker';
  const store = new Map<string, Stored>();
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

  return {
    kinds,
    defaultNamespace,
    store,
    get revision() {
      return revision;
    },
    keyOf,
    kindOf,
    qualified,
    details,
    notFound,
    invalid,
    forbidden,
    stamp,
    apply,
    wholeObject,
    write,
  };
}
