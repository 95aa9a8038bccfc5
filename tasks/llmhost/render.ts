/**
 * An LLMHost's Kubernetes resources, as Smarter's `services/renderer.py` renders them: for LLMHost 12 `llama`,
 * `PersistentVolumeClaim/llmhost-12-llama-models` (unless `storage.existingClaim`), `Secret/llmhost-12-llama` (the
 * Hugging Face token and the API key, when there are any), `Deployment` (the engine's container, `container.ts`,
 * with the model's download init container, shared memory and the compute's placement), `Service` (port 80) and,
 * with `network.ingress`, an `Ingress` whose cert-manager certificate lands in `llmhost-12-llama-tls`; all labeled
 * `smarter.sh/llmhost=llmhost-12-llama`, the pods also `smarter.sh/compute=<compute>`. A pure function: it reads
 * neither the database nor the cluster.
 */
import type { KubeObject } from '../cloud/kubernetes-port.js';
import {
  KINDS,
  LABEL_ACCOUNT,
  LABEL_COMPUTE,
  LABEL_LLMHOST,
  MAX_RESOURCE_NAME_LENGTH,
  RESOURCE_PREFIX,
  SERVICE_PORT,
} from './const.js';
import { SECRET_API_KEY, SECRET_HF_TOKEN, SHM_VOLUME, engineOf, modelOf, renderContainer } from './container.js';
import { MODELS_VOLUME } from './sources.js';
import type { LlmhostSpec } from './spec-model.js';

export { engineOf } from './container.js';

const dnsLabel = (v: string) =>
  v
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .replace(/-{2,}/g, '-');

export const resourceName = (id: number, name: string) =>
  `${RESOURCE_PREFIX}-${id}-${dnsLabel(name)}`.slice(0, MAX_RESOURCE_NAME_LENGTH).replace(/-+$/, '');
export const labelSelector = (base: string) => `${LABEL_LLMHOST}=${base}`;

export interface RenderContext {
  base: string;
  namespace: string;
  spec: LlmhostSpec;
  /** The default model name that clients send: the LLMHost's name. */
  servedName: string;
  accountNumber: string;
  /** The Ingress host, when `network.ingress`. */
  hostname: string | null;
  /** cert-manager's ClusterIssuer of the Ingress' certificate; none when empty. */
  clusterIssuer: string;
  platformName: string;
  /** The LLMHost's compute, whose nodes the pods are placed on. */
  compute: string;
  /** The taint of the compute's nodes, which the pods tolerate. */
  taint: { key: string; value: string; effect: string } | null;
  /** The Hugging Face token (`model.tokenSecret`'s value), which the Secret carries as `HF_TOKEN`; null for none. */
  hfToken: string | null;
  /** The API key, which the Secret carries as `API_KEY`; pass it only when `engineOf(spec).apiKey`. */
  apiKey: string | null;
}

export const endpoints = (ctx: Pick<RenderContext, 'base' | 'namespace' | 'spec' | 'hostname'>) => {
  const engine = engineOf(ctx.spec);
  const inCluster = `http://${ctx.base}.${ctx.namespace}.svc.cluster.local`;
  return {
    endpoint: `${inCluster}${engine.openaiPath}`,
    healthCheckUrl: `${inCluster}${engine.healthPathFor(ctx.spec)}`,
    publicUrl: ctx.spec.network.ingress && ctx.hostname ? `https://${ctx.hostname}${engine.openaiPath}` : '',
  };
};

type Toleration = Record<string, unknown>;

function renderDeployment(
  ctx: RenderContext,
  meta: KubeObject['metadata'],
  podLabels: Record<string, string>,
): KubeObject {
  const { spec } = ctx;
  const { resources } = spec;
  const nodeSelector: Record<string, string> = {
    ...resources.nodeSelector,
    ...(ctx.compute ? { [LABEL_COMPUTE]: ctx.compute } : {}),
  };
  const tolerations: Toleration[] = [...resources.tolerations];
  const tolerates = (key: string) => tolerations.some((t) => t.key === key);
  if (resources.gpuCount && !tolerates(resources.gpuResource)) {
    tolerations.push({ key: resources.gpuResource, operator: 'Exists', effect: 'NoSchedule' });
  }
  if (ctx.taint && !tolerates(ctx.taint.key)) {
    tolerations.push({ key: ctx.taint.key, operator: 'Exists', effect: ctx.taint.effect });
  }

  const initContainers = modelOf(ctx).initContainers;
  const pod: Record<string, unknown> = {
    // A model volume that non-root download containers can write; its ownership changed only once.
    securityContext: { fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch' },
    terminationGracePeriodSeconds: 60,
    containers: [renderContainer({ ...ctx, hfToken: Boolean(ctx.hfToken), apiKey: Boolean(ctx.apiKey) })],
    volumes: [
      { name: MODELS_VOLUME, persistentVolumeClaim: { claimName: spec.storage.existingClaim || `${ctx.base}-models` } },
      { name: SHM_VOLUME, emptyDir: { medium: 'Memory', sizeLimit: resources.shmSize } },
    ],
    ...(initContainers.length ? { initContainers } : {}),
    ...(Object.keys(nodeSelector).length ? { nodeSelector } : {}),
    ...(tolerations.length ? { tolerations } : {}),
    ...(resources.serviceAccountName ? { serviceAccountName: resources.serviceAccountName } : {}),
  };
  return {
    ...KINDS.deployment,
    metadata: meta,
    spec: {
      replicas: spec.scaling.replicas,
      // A ReadWriteOnce volume cannot be mounted by the old and the new pods at once.
      strategy: { type: spec.storage.accessMode === 'ReadWriteOnce' ? 'Recreate' : 'RollingUpdate' },
      progressDeadlineSeconds: spec.healthCheck.startupTimeoutSeconds + 600,
      selector: { matchLabels: { [LABEL_LLMHOST]: ctx.base } },
      template: { metadata: { labels: podLabels }, spec: pod },
    },
  };
}

/** `render_resources`: in the order in which they are applied. */
export function renderResources(ctx: RenderContext): KubeObject[] {
  const labels = {
    'app.kubernetes.io/name': ctx.base,
    'app.kubernetes.io/component': 'llmhost',
    'app.kubernetes.io/managed-by': ctx.platformName,
    [LABEL_LLMHOST]: ctx.base,
    [LABEL_ACCOUNT]: ctx.accountNumber,
  };
  const meta = (name = ctx.base, annotations?: Record<string, string>) => ({
    name,
    namespace: ctx.namespace,
    labels,
    ...(annotations ? { annotations } : {}),
  });
  const { storage, network } = ctx.spec;
  const out: KubeObject[] = [];
  if (!storage.existingClaim) {
    out.push({
      ...KINDS.persistentvolumeclaim,
      metadata: meta(`${ctx.base}-models`),
      spec: {
        accessModes: [storage.accessMode],
        resources: { requests: { storage: storage.size } },
        ...(storage.storageClass ? { storageClassName: storage.storageClass } : {}),
      },
    });
  }
  const secret: Record<string, string> = {
    ...(ctx.hfToken ? { [SECRET_HF_TOKEN]: ctx.hfToken } : {}),
    ...(ctx.apiKey ? { [SECRET_API_KEY]: ctx.apiKey } : {}),
  };
  if (Object.keys(secret).length) out.push({ ...KINDS.secret, type: 'Opaque', metadata: meta(), stringData: secret });
  out.push(renderDeployment(ctx, meta(), ctx.compute ? { ...labels, [LABEL_COMPUTE]: ctx.compute } : labels));
  out.push({
    ...KINDS.service,
    metadata: meta(),
    spec: {
      type: 'ClusterIP',
      selector: { [LABEL_LLMHOST]: ctx.base },
      ports: [{ name: 'http', port: SERVICE_PORT, targetPort: 'http', protocol: 'TCP' }],
    },
  });
  if (network.ingress && ctx.hostname) {
    const annotations: Record<string, string> = {
      'kubernetes.io/tls-acme': 'true',
      'traefik.ingress.kubernetes.io/router.entrypoints': 'websecure',
      'traefik.ingress.kubernetes.io/router.middlewares': `${ctx.namespace}-https-redirect@kubernetescrd`,
      ...(ctx.clusterIssuer ? { 'cert-manager.io/cluster-issuer': ctx.clusterIssuer } : {}),
    };
    out.push({
      ...KINDS.ingress,
      metadata: meta(ctx.base, annotations),
      spec: {
        ingressClassName: 'traefik',
        rules: [
          {
            host: ctx.hostname,
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: ctx.base, port: { number: SERVICE_PORT } } },
                },
              ],
            },
          },
        ],
        tls: [{ hosts: [ctx.hostname], secretName: `${ctx.base}-tls` }],
      },
    });
  }
  return out;
}
