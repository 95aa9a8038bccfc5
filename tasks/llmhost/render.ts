/**
 * An LLMHost's Kubernetes resources, as Smarter's `services/renderer.py` names and labels them: for LLMHost 12
 * `llama`, `PersistentVolumeClaim/llmhost-12-llama-models` (unless `storage.existingClaim`), `Secret/llmhost-12-llama`
 * (the API key, when the engine takes one), `Deployment`, `Service` (port 80) and, with `network.ingress`, an
 * `Ingress` whose cert-manager certificate lands in `llmhost-12-llama-tls`; all labeled
 * `smarter.sh/llmhost=llmhost-12-llama`, the pods also `smarter.sh/compute=<compute>`.
 */
import type { KubeObject } from '../cloud/ports.js';
import { DEFAULT_CPU, DEFAULT_MEMORY, ENGINES, KINDS, LABEL_ACCOUNT, LABEL_COMPUTE, LABEL_LLMHOST, MAX_RESOURCE_NAME_LENGTH, MODELS_MOUNT_PATH, RESOURCE_PREFIX, SERVICE_PORT } from './const.js';
import { LLMHostConfigurationError, type LlmhostSpec } from './spec.js';

const dnsLabel = (v: string) => v.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').replace(/-{2,}/g, '-');

export const resourceName = (id: number, name: string) => `${RESOURCE_PREFIX}-${id}-${dnsLabel(name)}`.slice(0, MAX_RESOURCE_NAME_LENGTH).replace(/-+$/, '');
export const labelSelector = (base: string) => `${LABEL_LLMHOST}=${base}`;

export interface RenderContext {
  base: string;
  namespace: string;
  spec: LlmhostSpec;
  servedName: string;
  accountNumber: string;
  /** The Ingress host, when `network.ingress`. */
  hostname: string | null;
  clusterIssuer: string;
  platformName: string;
  compute: string;
  taint: { key: string; value: string; effect: string };
  /** The Hugging Face token (`model.tokenSecret`'s value), which the Secret carries as `HF_TOKEN`; null for none. */
  hfToken: string | null;
  /** The API key, which the Secret carries as `API_KEY`; pass it only when `engineOf(spec).apiKey`. */
  apiKey: string | null;
}

export function engineOf(spec: LlmhostSpec) {
  const engine = ENGINES[spec.engine.name];
  if (!engine) throw new LLMHostConfigurationError(`engine.name: ${spec.engine.name} is not one of ${Object.keys(ENGINES).join(', ')}`);
  return engine;
}

export const endpoints = (ctx: Pick<RenderContext, 'base' | 'namespace' | 'spec' | 'hostname'>) => {
  const engine = engineOf(ctx.spec);
  const inCluster = `http://${ctx.base}.${ctx.namespace}.svc.cluster.local`;
  return {
    endpoint: `${inCluster}${engine.openaiPath}`,
    healthCheckUrl: `${inCluster}${engine.healthPath}`,
    publicUrl: ctx.spec.network.ingress && ctx.hostname ? `https://${ctx.hostname}${engine.openaiPath}` : '',
  };
};

export function renderResources(ctx: RenderContext): KubeObject[] {
  const engine = engineOf(ctx.spec);
  const labels = { 'app.kubernetes.io/name': ctx.base, 'app.kubernetes.io/component': 'llmhost', 'app.kubernetes.io/managed-by': ctx.platformName, [LABEL_LLMHOST]: ctx.base, [LABEL_ACCOUNT]: ctx.accountNumber };
  const meta = (name = ctx.base, annotations?: Record<string, string>) => ({ name, namespace: ctx.namespace, labels, ...(annotations ? { annotations } : {}) });
  const { storage, resources, scaling, network } = ctx.spec;
  const claim = storage.existingClaim || `${ctx.base}-models`;
  const out: KubeObject[] = [];
  if (!storage.existingClaim) {
    out.push({ ...KINDS.persistentvolumeclaim, metadata: meta(claim), spec: { accessModes: [storage.accessMode], resources: { requests: { storage: storage.size } }, ...(storage.storageClass ? { storageClassName: storage.storageClass } : {}) } });
  }
  const secret: Record<string, string> = { ...(ctx.hfToken ? { HF_TOKEN: ctx.hfToken } : {}), ...(ctx.apiKey ? { API_KEY: ctx.apiKey } : {}) };
  if (Object.keys(secret).length) out.push({ ...KINDS.secret, type: 'Opaque', metadata: meta(), stringData: secret });
  const memory = resources.memory || DEFAULT_MEMORY;
  const requests: Record<string, unknown> = { cpu: String(resources.cpu ?? DEFAULT_CPU), memory };
  const limits: Record<string, unknown> = { memory };
  if (resources.gpuCount) requests[resources.gpuResource] = limits[resources.gpuResource] = resources.gpuCount;
  const tolerations = [
    ...(resources.gpuCount ? [{ key: resources.gpuResource, operator: 'Exists', effect: 'NoSchedule' }] : []),
    ...(ctx.taint.key !== resources.gpuResource || !resources.gpuCount ? [{ key: ctx.taint.key, operator: 'Exists', effect: ctx.taint.effect }] : []),
  ];
  out.push({
    ...KINDS.deployment,
    metadata: meta(),
    spec: {
      replicas: scaling.replicas,
      strategy: { type: storage.accessMode === 'ReadWriteOnce' ? 'Recreate' : 'RollingUpdate' },
      selector: { matchLabels: { [LABEL_LLMHOST]: ctx.base } },
      template: {
        metadata: { labels: { ...labels, [LABEL_COMPUTE]: ctx.compute } },
        spec: {
          containers: [
            {
              name: 'engine',
              image: ctx.spec.engine.image || engine.image,
              env: [{ name: 'MODEL', value: ctx.spec.model.repository }, { name: 'SERVED_MODEL_NAME', value: ctx.servedName }, ...(ctx.apiKey ? [{ name: 'API_KEY', valueFrom: { secretKeyRef: { name: ctx.base, key: 'API_KEY' } } }] : [])],
              ports: [{ name: 'http', containerPort: engine.port, protocol: 'TCP' }],
              resources: { requests, limits },
              volumeMounts: [{ name: 'models', mountPath: MODELS_MOUNT_PATH }],
              readinessProbe: { httpGet: { path: engine.healthPath, port: 'http' } },
            },
          ],
          volumes: [{ name: 'models', persistentVolumeClaim: { claimName: claim } }],
          nodeSelector: { [LABEL_COMPUTE]: ctx.compute },
          tolerations,
        },
      },
    },
  });
  out.push({ ...KINDS.service, metadata: meta(), spec: { type: 'ClusterIP', selector: { [LABEL_LLMHOST]: ctx.base }, ports: [{ name: 'http', port: SERVICE_PORT, targetPort: 'http', protocol: 'TCP' }] } });
  if (network.ingress && ctx.hostname) {
    out.push({
      ...KINDS.ingress,
      metadata: meta(ctx.base, {
        'kubernetes.io/tls-acme': 'true',
        'traefik.ingress.kubernetes.io/router.entrypoints': 'websecure',
        'traefik.ingress.kubernetes.io/router.middlewares': `${ctx.namespace}-https-redirect@kubernetescrd`,
        'cert-manager.io/cluster-issuer': ctx.clusterIssuer,
      }),
      spec: {
        ingressClassName: 'traefik',
        rules: [{ host: ctx.hostname, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: ctx.base, port: { number: SERVICE_PORT } } } }] } }],
        tls: [{ hosts: [ctx.hostname], secretName: `${ctx.base}-tls` }],
      },
    });
  }
  return out;
}
