/**
 * The Ingress of an LLMClient's host, with the content of Smarter's `llmclient/k8s/ingress.yaml.tpl`
 * (Smarter's `smarter/smarter/apps/llmclient/k8s/ingress.yaml.tpl`): traefik on `websecure` with the namespace's CORS and HTTPS-redirect middlewares,
 * cert-manager's cluster issuer (named after the API domain) issuing the TLS secret `<host>-tls`, backend
 * `smarter:8000`. cert-manager's ingress-shim names the Certificate after that secret.
 */
import type { KubeObject, KubeRef } from '../cloud/kubernetes-port.js';

export interface IngressValues {
  host: string;
  namespace: string;
  platformName: string;
  clusterIssuer: string;
}

export const SERVICE = { name: 'smarter', port: 8000 } as const;

/** The Ingress of `host` in the environment's namespace, its certificate from the API domain's cluster issuer. */
export const ingressOf = (env: { namespace: string; platformName: string; apiDomain: string }, host: string) =>
  ingressManifest({ host, namespace: env.namespace, platformName: env.platformName, clusterIssuer: env.apiDomain });

export function ingressManifest(v: IngressValues): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: v.host,
      namespace: v.namespace,
      labels: { 'app.kubernetes.io/application-group': v.platformName, 'app.kubernetes.io/name': v.platformName },
      annotations: {
        'kubernetes.io/tls-acme': 'true',
        'cert-manager.io/cluster-issuer': v.clusterIssuer,
        'traefik.ingress.kubernetes.io/router.entrypoints': 'websecure',
        'traefik.ingress.kubernetes.io/router.middlewares': `${v.namespace}-cors@kubernetescrd,${v.namespace}-https-redirect@kubernetescrd`,
      },
    },
    spec: {
      ingressClassName: 'traefik',
      tls: [{ hosts: [v.host], secretName: `${v.host}-tls` }],
      rules: [
        {
          host: v.host,
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: SERVICE.name, port: { number: SERVICE.port } } },
              },
            ],
          },
        },
      ],
    },
  };
}

/** The three objects of a host: its Ingress, the cert-manager Certificate and the TLS Secret. */
export function ingressResources(
  host: string,
  namespace: string,
): { ingress: KubeRef; certificate: KubeRef; secret: KubeRef } {
  return {
    ingress: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: host, namespace },
    certificate: { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: `${host}-tls`, namespace },
    secret: { apiVersion: 'v1', kind: 'Secret', name: `${host}-tls`, namespace },
  };
}

/** cert-manager's `Ready` condition is True (Smarter's `_certificate_ready`). */
export function certificateReady(cert: KubeObject | null): boolean {
  if (!cert) return false;
  const status = cert.status as { conditions?: Array<{ type?: unknown; status?: unknown }> } | undefined;
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  return String(ready?.status).toLowerCase() === 'true';
}
