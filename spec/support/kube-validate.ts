/**
 * Validates a Kubernetes object against the published schemas of its kind, as an API server would before storing
 * it: the npm `kubernetes-models` packages (the OpenAPI schemas of Kubernetes' own kinds, and of the CRDs of
 * cert-manager, KEDA, the Prometheus Operator and Traefik), picked by apiVersion and kind, plus the object-meta
 * rules every kind shares (apimachinery's ValidateObjectMeta: the name, label and annotation syntax), which the
 * OpenAPI schemas do not carry.
 *
 *   const result = validateKubeObject(manifest);
 *   if (!result.ok) for (const e of result.errors) console.log(`${e.path}: ${e.message}`);
 *
 * A kind that no package describes is an error, never a pass: nothing goes through unvalidated. Paths are written
 * as the API server writes a cause's `field` (`spec.template.spec.containers[0].image`), messages as its
 * `field.Error` bodies (`Required value`, `Invalid value: "x": …`, `Unsupported value: "x": supported values: …`).
 *
 * Unknown fields are not reported: the packages' schemas allow them (as an API server told
 * `fieldValidation=Ignore` does).
 */
import { createRequire } from 'node:module';

export interface KubeFieldError {
  /** The field, as a Status cause's `field` names it: `spec.replicas`, `spec.rules[0].host`, `metadata.labels`. */
  path: string;
  /** The body of apimachinery's field.Error, without the field: `Required value`, `Invalid value: "x": …`. */
  message: string;
  /** The cause type of a Status (`FieldValueRequired`, `FieldValueInvalid`, `FieldValueNotSupported`, …). */
  reason: string;
}

export type KubeValidation = { ok: true } | { ok: false; errors: KubeFieldError[] };

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

interface ModelClass {
  apiVersion?: string;
  kind?: string;
  new (data: unknown): { validate(): void };
}

/** API group → the package that models its kinds; any other group is looked up in `kubernetes-models`. */
const CRD_PACKAGES: Record<string, string> = {
  'cert-manager.io': '@kubernetes-models/cert-manager',
  'acme.cert-manager.io': '@kubernetes-models/cert-manager',
  'keda.sh': '@kubernetes-models/keda',
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
  'traefik.io': '@kubernetes-models/traefik',
  'traefik.containo.us': '@kubernetes-models/traefik',
};

const require = createRequire(import.meta.url);
const models = new Map<string, ModelClass | null>();

/** The model class of apiVersion+kind, or null when no package has that kind. */
function modelOf(apiVersion: string, kind: string): ModelClass | null {
  const key = `${apiVersion}|${kind}`;
  const cached = models.get(key);
  if (cached !== undefined) return cached;
  let found: ModelClass | null = null;
  // Only names an API server could accept reach require(): no path can be smuggled in through apiVersion or kind.
  const m = /^(?:([a-z0-9][a-z0-9.-]*)\/)?(v[0-9]+(?:(?:alpha|beta)[0-9]+)?)$/.exec(apiVersion);
  if (m && /^[A-Z][A-Za-z0-9]*$/.test(kind)) {
    const group = m[1] ?? '';
    const version = m[2] as string;
    const path = group
      ? `${CRD_PACKAGES[group] ?? 'kubernetes-models'}/${group}/${version}/${kind}`
      : `kubernetes-models/${version}/${kind}`;
    try {
      const exported = (require(path) as Record<string, unknown>)[kind] as ModelClass | undefined;
      // A schema of a part (DeploymentSpec) has no apiVersion/kind of its own: it is not a kind.
      if (exported && exported.apiVersion === apiVersion && exported.kind === kind) found = exported;
    } catch (err) {
      if ((err as { code?: string }).code !== 'MODULE_NOT_FOUND') throw err;
    }
  }
  models.set(key, found);
  return found;
}

/** `/spec/rules/0/host` → `spec.rules[0].host`; keys that are not identifiers in brackets, as Kubernetes does. */
function fieldPath(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^[0-9]+$/.test(seg) || !/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(seg)) out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

function valueAt(root: unknown, pointer: string): unknown {
  let v = root;
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[seg] : undefined;
  }
  return v;
}

/** A bad value as field.Error prints it: strings quoted, numbers and booleans bare, null as null. */
function shown(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function schemaErrors(obj: unknown, errors: AjvError[]): KubeFieldError[] {
  const out: KubeFieldError[] = [];
  // A oneOf (int-or-string) fails with one `type` error per branch and the oneOf itself: one cause for all.
  const alternatives = new Map<string, string[]>();
  for (const e of errors) {
    if (e.keyword === 'oneOf' || e.keyword === 'anyOf') alternatives.set(e.instancePath, []);
  }
  for (const e of errors) {
    if (e.keyword === 'type' && alternatives.has(e.instancePath)) {
      alternatives.get(e.instancePath)?.push(String(e.params.type));
    }
  }
  for (const e of errors) {
    const path = fieldPath(e.instancePath);
    const value = shown(valueAt(obj, e.instancePath));
    if (e.keyword === 'required') {
      const missing = String(e.params.missingProperty);
      out.push({
        path: path ? `${path}.${missing}` : missing,
        message: 'Required value',
        reason: 'FieldValueRequired',
      });
    } else if (e.keyword === 'enum') {
      const allowed = ((e.params.allowedValues as unknown[] | undefined) ?? []).map((a) => JSON.stringify(a));
      out.push({
        path,
        message: `Unsupported value: ${value}: supported values: ${allowed.join(', ')}`,
        reason: 'FieldValueNotSupported',
      });
    } else if (e.keyword === 'type' && alternatives.has(e.instancePath)) {
      continue;
    } else if (e.keyword === 'oneOf' || e.keyword === 'anyOf') {
      const types = alternatives.get(e.instancePath) ?? [];
      const detail = types.length > 0 ? `must be of type ${types.join(' or ')}` : (e.message ?? e.keyword);
      out.push({ path, message: `Invalid value: ${value}: ${detail}`, reason: 'FieldValueTypeInvalid' });
    } else if (e.keyword === 'type') {
      out.push({
        path,
        message: `Invalid value: ${value}: must be of type ${String(e.params.type)}`,
        reason: 'FieldValueTypeInvalid',
      });
    } else {
      out.push({ path, message: `Invalid value: ${value}: ${e.message ?? e.keyword}`, reason: 'FieldValueInvalid' });
    }
  }
  return out;
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** Kinds whose names are DNS labels, not subdomains (the API server's per-kind name validation). */
const LABEL_NAMED: Record<string, 'dns1123' | 'dns1035'> = {
  'v1|Namespace': 'dns1123',
  'v1|Service': 'dns1035',
};

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_NAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const invalid = (path: string, value: unknown, detail: string): KubeFieldError => ({
  path,
  message: `Invalid value: ${shown(value)}: ${detail}`,
  reason: 'FieldValueInvalid',
});

/** A label or annotation key: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters. */
function keyErrors(path: string, key: string): KubeFieldError[] {
  const parts = key.split('/');
  const name = parts.length === 2 ? (parts[1] as string) : key;
  const prefix = parts.length === 2 ? (parts[0] as string) : undefined;
  if (parts.length > 2) {
    return [
      invalid(
        path,
        key,
        `a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
      ),
    ];
  }
  const out: KubeFieldError[] = [];
  if (prefix !== undefined) {
    if (prefix.length === 0) out.push(invalid(path, key, 'prefix part must be non-empty'));
    else if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) {
      out.push(invalid(path, key, `prefix part ${SUBDOMAIN_MSG}`));
    }
  }
  if (name.length === 0) out.push(invalid(path, key, 'name part must be non-empty'));
  else if (name.length > 63) out.push(invalid(path, key, 'name part must be no more than 63 characters'));
  else if (!QUALIFIED_NAME.test(name)) out.push(invalid(path, key, QUALIFIED_NAME_MSG));
  return out;
}

/** apimachinery's ValidateObjectMeta, the part every kind shares: name, labels, annotation keys and size. */
function metaErrors(apiVersion: string, kind: string, meta: unknown): KubeFieldError[] {
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) {
    return [
      {
        path: 'metadata.name',
        message: 'Required value: name or generateName is required',
        reason: 'FieldValueRequired',
      },
    ];
  }
  const m = meta as Record<string, unknown>;
  const out: KubeFieldError[] = [];
  const name = m.name;
  if (typeof name !== 'string' || name === '') {
    if (typeof m.generateName !== 'string' || m.generateName === '') {
      out.push({
        path: 'metadata.name',
        message: 'Required value: name or generateName is required',
        reason: 'FieldValueRequired',
      });
    }
  } else {
    const rule = LABEL_NAMED[`${apiVersion}|${kind}`];
    if (rule === 'dns1035') {
      if (name.length > 63) out.push(invalid('metadata.name', name, 'must be no more than 63 characters'));
      else if (!DNS1035_LABEL.test(name)) out.push(invalid('metadata.name', name, DNS1035_LABEL_MSG));
    } else if (rule === 'dns1123') {
      if (name.length > 63) out.push(invalid('metadata.name', name, 'must be no more than 63 characters'));
      else if (!DNS1123_LABEL.test(name)) out.push(invalid('metadata.name', name, DNS1123_LABEL_MSG));
    } else if (name.length > 253) {
      out.push(invalid('metadata.name', name, 'must be no more than 253 characters'));
    } else if (!DNS1123_SUBDOMAIN.test(name)) {
      out.push(invalid('metadata.name', name, SUBDOMAIN_MSG));
    }
  }
  if (typeof m.namespace === 'string' && m.namespace !== '' && !DNS1123_LABEL.test(m.namespace)) {
    out.push(invalid('metadata.namespace', m.namespace, DNS1123_LABEL_MSG));
  }
  const labels = m.labels;
  if (labels !== null && typeof labels === 'object' && !Array.isArray(labels)) {
    for (const [k, v] of Object.entries(labels as Record<string, unknown>)) {
      out.push(...keyErrors('metadata.labels', k));
      if (typeof v !== 'string') continue;
      if (v.length > 63) out.push(invalid('metadata.labels', v, 'must be no more than 63 characters'));
      else if (!LABEL_VALUE.test(v)) out.push(invalid('metadata.labels', v, LABEL_VALUE_MSG));
    }
  }
  const annotations = m.annotations;
  if (annotations !== null && typeof annotations === 'object' && !Array.isArray(annotations)) {
    let size = 0;
    for (const [k, v] of Object.entries(annotations as Record<string, unknown>)) {
      out.push(...keyErrors('metadata.annotations', k.toLowerCase()));
      size += k.length + (typeof v === 'string' ? v.length : 0);
    }
    if (size > 256 * 1024) {
      out.push({
        path: 'metadata.annotations',
        message: `Too long: must have at most ${256 * 1024} bytes`,
        reason: 'FieldValueTooLong',
      });
    }
  }
  return out;
}

/** Validates `obj` against the schema of its apiVersion+kind and the object-meta rules; an unknown kind fails. */
export function validateKubeObject(obj: unknown): KubeValidation {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    return {
      ok: false,
      errors: [{ path: '', message: 'Invalid value: the object is not a JSON object', reason: 'FieldValueInvalid' }],
    };
  }
  const o = obj as Record<string, unknown>;
  const apiVersion = o.apiVersion;
  const kind = o.kind;
  if (typeof apiVersion !== 'string' || apiVersion === '') {
    return { ok: false, errors: [{ path: 'apiVersion', message: 'Required value', reason: 'FieldValueRequired' }] };
  }
  if (typeof kind !== 'string' || kind === '') {
    return { ok: false, errors: [{ path: 'kind', message: 'Required value', reason: 'FieldValueRequired' }] };
  }
  const Model = modelOf(apiVersion, kind);
  if (!Model) {
    return {
      ok: false,
      errors: [
        {
          path: 'kind',
          message: `Invalid value: ${shown(kind)}: no schema for kind ${kind} in ${apiVersion} (kubernetes-models and the CRD packages of spec/support/kube-validate.ts)`,
          reason: 'FieldValueNotFound',
        },
      ],
    };
  }
  const errors: KubeFieldError[] = [];
  try {
    new Model(obj).validate();
  } catch (err) {
    const list = (err as { errors?: AjvError[] }).errors;
    if (!Array.isArray(list)) throw err;
    errors.push(...schemaErrors(obj, list));
  }
  errors.push(...metaErrors(apiVersion, kind, o.metadata));
  const seen = new Set<string>();
  const unique = errors.filter((e) => {
    const key = `${e.path}\n${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return unique.length === 0 ? { ok: true } : { ok: false, errors: unique };
}

/** The Status message of an API server's 422: `Deployment.apps "x" is invalid: spec.replicas: …` (one error) or `[a, b]`. */
export function invalidMessage(group: string, kind: string, name: string, errors: KubeFieldError[]): string {
  const qualified = group ? `${kind}.${group}` : kind;
  const each = errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message));
  const agg = each.length === 1 ? each[0] : `[${each.join(', ')}]`;
  return `${qualified} ${JSON.stringify(name)} is invalid: ${agg}`;
}
