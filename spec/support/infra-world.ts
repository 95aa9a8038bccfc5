/**
 * The outside world of an end-to-end infrastructure test: the API domain's zone with its load balancer's A
 * record, a cluster where cert-manager issues certificates when the test says so, public DNS that resolves when
 * the test says so, and a mailbox. Tests drive it through this one interface.
 */
import type { CloudDeps } from '../../tasks/cloud/ports.js';
import { FakeCloud } from './fake-cloud.js';

export interface World {
  cloud: CloudDeps;
  loadBalancer: string[];
  certificateChecks(host: string): number;
  domainChecks(host: string): number;
  issueTls(host: string): Promise<void>;
  resolve(host: string): Promise<void>;
  delegate(domain: string, zoneId: string): Promise<void>;
  issueCertificate(domain: string): Promise<void>;
  aRecord(host: string, zoneId?: string): Promise<string[]>;
  ingress(host: string): Promise<boolean>;
  mails(): Array<{ to: string[]; subject: string }>;
  stop(): Promise<void>;
}

export async function startWorld(o: { apiDomain: string; namespace: string }): Promise<World> {
  const fake = new FakeCloud();
  const apiZone = fake.addZone(o.apiDomain);
  const loadBalancer = ['192.0.2.10'];
  fake.setRecord(apiZone.id, { name: o.apiDomain, type: 'A', ttl: 300, values: loadBalancer });
  const count = (call: string) => fake.calls.filter((c) => c === call).length;
  return Promise.resolve({
    cloud: fake.deps,
    loadBalancer,
    certificateChecks: (host) => count(`kube.get Certificate/${o.namespace}/${host}-tls`),
    domainChecks: (host) => count(`resolver.lookup ${host} A`),
    issueTls: async (host) => fake.issueTls(host, o.namespace),
    resolve: async (host) => fake.answer(host, 'A', { status: 'found', values: loadBalancer }),
    delegate: async (domain, zoneId) => fake.answer(domain, 'NS', { status: 'found', values: fake.zones.get(zoneId)?.nameServers ?? [] }),
    issueCertificate: async (domain) => {
      for (const c of fake.certificates) if (c.domain === domain) c.status = 'ISSUED';
    },
    aRecord: async (host, zoneId) => fake.record(zoneId ?? apiZone.id, host, 'A')?.values ?? [],
    ingress: async (host) => fake.object('Ingress', host, o.namespace) !== undefined,
    mails: () => fake.sent.map((m) => ({ to: m.to, subject: m.subject })),
    stop: async () => undefined,
  });
}
