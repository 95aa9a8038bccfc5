/**
 * The object model of the Kubernetes stand-in (kube-standin.ts): the kinds it serves, what it stores, label
 * selectors, merges and patches, and the API server's `Status` errors.
 */

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

export const BUILT_IN_KINDS: KindSpec[] = [
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

export function pluralOf(kind: string): string {
  const k = kind.toLowerCase();
  if (/(s|x|ch|sh)$/.test(k)) return `${k}es`;
  if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

export interface Kind {
  apiVersion: string;
  group: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

export interface Stored {
  object: JsonObject;
  /** What each field manager last applied (the fields it owns). */
  applied: Map<string, JsonObject>;
}

export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
export const clone = <T>(v: T): T => structuredClone(v);
export const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Leaf paths of a manifest (`.spec.rules`), lists counted as leaves, server-owned metadata left out. */
export function leaves(o: JsonObject, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(o)) {
    const p = `${prefix}.${k}`;
    if (p === '.apiVersion' || p === '.kind' || p === '.metadata.name' || p === '.metadata.namespace') continue;
    if (isObject(v)) for (const [lp, lv] of leaves(v, p)) out.set(lp, lv);
    else out.set(p, JSON.stringify(v));
  }
  return out;
}

export function deepMerge(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(b) && isObject(v) ? deepMerge(b, v) : clone(v);
  }
  return out;
}

/** RFC 7386 JSON merge patch: objects merged, `null` deletes, anything else replaces (lists whole). */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export type Requirement = (labels: Record<string, string>) => boolean;

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

export class ApiError extends Error {
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
export const methodNotAllowed = () => ({
  code: 405,
  body: new ApiError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
  ).status(),
});

/** A PersistentVolume of the EBS CSI driver, bound to the claim `namespace/claim`, as a cluster holds one. */
export const ebsVolume = (name: string, volumeHandle: string, namespace: string, claim: string): JsonObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { csi: { driver: 'ebs.csi.aws.com', volumeHandle }, claimRef: { namespace, name: claim } },
});
