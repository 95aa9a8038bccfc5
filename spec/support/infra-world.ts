/**
 * The outside world of an end-to-end infrastructure test, on real servers reached through the real clients
 * (`openCloud`): moto (Route 53 and ACM, behind a fault proxy) holding the API domain's zone and its load
 * balancer's A record, the Kubernetes API stand-in where the test plays cert-manager, a DNS server that answers
 * what the test publishes, and an SMTP server that keeps what it receives.
 */
import type { CloudDeps } from '../../tasks/cloud/cloud-deps.js';
import { type FaultProxy, startFaultProxy } from './aws-faults.js';
import { testCloud } from './cloud.js';
import { type DnsStandIn, startDnsServer } from './dns-server.js';
import { type KubeStandIn, startKubeStandIn } from './kube-standin.js';
import { type Moto, startMoto, useMotoEnv } from './moto.js';
import { type SmtpStandIn, startSmtpServer } from './smtp.js';

export interface World {
  cloud: CloudDeps;
  moto: Moto;
  aws: FaultProxy;
  kube: KubeStandIn;
  dns: DnsStandIn;
  smtp: SmtpStandIn;
  loadBalancer: string[];
  /** GETs of the host's cert-manager Certificate: one per certificate check. */
  certificateChecks(host: string): number;
  /** A queries of the host: one per domain check. */
  domainChecks(host: string): number;
  /** cert-manager issued the host's certificate: its Certificate is Ready and its TLS Secret exists. */
  issueTls(host: string): void;
  /** Public DNS now resolves the host to the load balancer. */
  resolve(host: string): void;
  /** The customer delegated the domain to its hosted zone's name servers. */
  delegate(domain: string, zoneId: string): Promise<void>;
  aRecord(host: string, zoneId?: string): Promise<string[]>;
  ingress(host: string): boolean;
  mails(): Array<{ to: string[]; subject: string }>;
  stop(): Promise<void>;
}

export async function startWorld(o: {
  apiDomain: string;
  namespace: string;
  acmValidationWait?: number;
}): Promise<World> {
  const moto = await startMoto({ acmValidationWait: o.acmValidationWait ?? 0 });
  const aws = await startFaultProxy(moto.endpoint);
  const restoreAws = useMotoEnv(aws.endpoint);
  const kube = await startKubeStandIn({ defaultNamespace: o.namespace });
  const savedKubeconfig = process.env.KUBECONFIG;
  process.env.KUBECONFIG = kube.kubeconfig;
  const dns = await startDnsServer();
  const smtp = await startSmtpServer({ user: 'smarter', pass: 'stand-in' });
  const cloud = testCloud({
    ...smtp.env,
    SMARTER_DNS_SERVERS: dns.server,
    SMARTER_DNS_TIMEOUT: '1',
    SMARTER_WORKER_SMTP_TIMEOUT: '3',
  });
  // The first readiness check asks STS once; asked now, it never takes a fault a test meant for another call.
  await cloud.readiness.provider();
  const loadBalancer = ['192.0.2.10'];
  const apiZone = await cloud.route53.getOrCreateZone(o.apiDomain);
  await cloud.route53.upsertRecord(apiZone.id, { name: o.apiDomain, type: 'A', ttl: 300, values: loadBalancer });
  const ns = o.namespace;
  return {
    cloud,
    moto,
    aws,
    kube,
    dns,
    smtp,
    loadBalancer,
    certificateChecks: (host) =>
      kube.requests.filter((r) => r.startsWith('GET ') && r.includes(`/namespaces/${ns}/certificates/${host}-tls`))
        .length,
    domainChecks: (host) => dns.queries.filter((q) => q === `${host} A`).length,
    // The stand-in plays cert-manager's ingress-shim: the applied Ingress got its Certificate, not Ready.
    issueTls: (host) => kube.issueCertificate({ name: `${host}-tls`, namespace: ns }),
    resolve: (host) => dns.set(host, 'A', loadBalancer),
    delegate: async (domain, zoneId) => {
      const zone = await cloud.route53.getZone(zoneId);
      dns.set(domain, 'NS', zone?.nameServers ?? []);
    },
    aRecord: async (host, zoneId) => (await cloud.route53.getRecord(zoneId ?? apiZone.id, host, 'A'))?.values ?? [],
    ingress: (host) =>
      kube.object({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: host, namespace: ns }) !== undefined,
    mails: () => smtp.messages.map((m) => ({ to: m.to, subject: m.subject })),
    async stop() {
      restoreAws();
      if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = savedKubeconfig;
      await Promise.allSettled([smtp.stop(), dns.stop(), kube.stop(), aws.stop()]);
      await moto.stop();
    },
  };
}
