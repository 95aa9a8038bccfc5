/**
 * Kubernetes through `@kubernetes/client-node`'s generic KubernetesObjectApi (it finds each kind's resource by
 * discovery, so Ingress, cert-manager's Certificate and any other kind go through the same four calls).
 * Writes are server-side apply with one field manager and `force`: the worker owns what it applies, and a
 * re-run converges instead of failing on its own earlier write.
 */
import { KubeConfig, KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';
import type { Logger } from '../../lib/logger.js';
import { type Classify, isNetworkError, messageOf } from './call.js';
import { cloudCall } from './call.js';
import { CloudError, type CloudErrorKind } from './errors.js';
import type { KubeObject, KubeRef, Kubernetes } from './kubernetes-port.js';

export const FIELD_MANAGER = 'smarter-worker';

/** KUBECONFIG (or ~/.kube/config), else the pod's service account, as kubectl looks. */
export function loadKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}

const refText = (r: { apiVersion: string; kind: string; name?: string; namespace?: string }) =>
  `${r.apiVersion}/${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name ?? '*'}`;

/** What the client returns (typed models, Dates) as the plain JSON the API server sent. */
const plain = (o: unknown): KubeObject => JSON.parse(JSON.stringify(o)) as KubeObject;

export class KubeClient implements Kubernetes {
  private apiClient: KubernetesObjectApi | undefined;

  constructor(
    private readonly config: () => KubeConfig,
    private readonly logger: Logger,
  ) {}

  private get api(): KubernetesObjectApi {
    return (this.apiClient ??= KubernetesObjectApi.makeApiClient(this.config()));
  }

  async apply(manifest: KubeObject): Promise<KubeObject> {
    return this.call('apply', refText({ ...manifest, ...manifest.metadata }), async () => {
      const out = await this.api.patch(
        manifest,
        undefined,
        undefined,
        FIELD_MANAGER,
        true,
        PatchStrategy.ServerSideApply,
      );
      return { ...plain(out), apiVersion: manifest.apiVersion, kind: manifest.kind };
    });
  }

  async get(ref: KubeRef): Promise<KubeObject | null> {
    return this.call('get', refText(ref), async () => {
      try {
        const out = await this.api.read({
          apiVersion: ref.apiVersion,
          kind: ref.kind,
          metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
        });
        return { ...plain(out), apiVersion: ref.apiVersion, kind: ref.kind };
      } catch (err) {
        if (isObjectNotFound(err)) return null;
        throw err;
      }
    });
  }

  async list(ref: Omit<KubeRef, 'name'> & { labelSelector?: string }): Promise<KubeObject[]> {
    const resource = `${refText(ref)}${ref.labelSelector ? ` -l ${ref.labelSelector}` : ''}`;
    return this.call('list', resource, async () => {
      const out = await this.api.list(
        ref.apiVersion,
        ref.kind,
        ref.namespace,
        undefined,
        undefined,
        undefined,
        undefined,
        ref.labelSelector,
      );
      // A list's items carry no kind or apiVersion: the list's own are theirs.
      return (out.items ?? []).map((item) => ({ ...plain(item), apiVersion: ref.apiVersion, kind: ref.kind }));
    });
  }

  async delete(ref: KubeRef): Promise<boolean> {
    return this.call('delete', refText(ref), async () => {
      try {
        await this.api.delete({
          apiVersion: ref.apiVersion,
          kind: ref.kind,
          metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
        });
        return true;
      } catch (err) {
        if (isObjectNotFound(err)) return false;
        throw err;
      }
    });
  }

  private call<T>(verb: string, resource: string, run: () => Promise<T>): Promise<T> {
    return cloudCall(this.logger, 'kubernetes', verb, resource, kubeClassifier(verb, resource), run);
  }
}

/** The client prefixes a failed discovery of the kind's resource; that is no answer about the object. */
const isDiscoveryError = (err: unknown) =>
  err instanceof Error && /^(Failed to fetch resource metadata|Unrecognized API version and kind)/.test(err.message);

function statusCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

function isObjectNotFound(err: unknown): boolean {
  return statusCode(err) === 404 && !isDiscoveryError(err);
}

/** The API server's Status message (`ingresses.networking.k8s.io "x" is forbidden: …`), when it sent one. */
function statusMessage(err: unknown): string | undefined {
  const body = (err as { body?: unknown } | null)?.body;
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return body.trim() === '' ? undefined : body.slice(0, 500);
    }
  }
  const message = (parsed as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : undefined;
}

export function kubeClassifier(verb: string, resource: string): Classify {
  return (err) => {
    const code = statusCode(err);
    let kind: CloudErrorKind;
    if (code === undefined && isNetworkError(err)) kind = 'Unavailable';
    else if (isDiscoveryError(err)) {
      kind =
        code === 401 || code === 403 ? 'AccessDenied' : code !== undefined && code >= 500 ? 'Unavailable' : 'Invalid';
    } else if (code === 404) kind = 'NotFound';
    else if (code === 401 || code === 403) kind = 'AccessDenied';
    else if (code === 409) kind = 'Conflict';
    else if (code === 429) kind = 'Throttled';
    else if (code !== undefined && code >= 500) kind = 'Unavailable';
    else if (code !== undefined && code >= 400) kind = 'Invalid';
    // No answer and no network failure: our side is wrong (a kubeconfig that does not load, a bad manifest).
    else kind = 'Invalid';
    const detail = statusMessage(err) ?? (code !== undefined ? `HTTP ${code}` : (messageOf(err).split('\n')[0] ?? ''));
    const prefix = isDiscoveryError(err) && kind === 'Invalid' ? 'the API server does not serve this kind: ' : '';
    return new CloudError('kubernetes', verb, resource, kind, `${prefix}${detail}`, { cause: err });
  };
}
