/**
 * In-memory stand-ins of the cloud ports (tasks/cloud/*-port.ts), for fast tests of the infrastructure tasks'
 * decisions: Route 53 zones and records, ACM certificates, Kubernetes objects, public DNS answers, sent mail.
 * `failNext` makes a call throw once, e.g. a CloudError AccessDenied, as the real adapters would.
 */
import type { Certificate } from '../../tasks/cloud/acm-port.js';
import type { CloudDeps } from '../../tasks/cloud/cloud-deps.js';
import { CloudError } from '../../tasks/cloud/errors.js';
import type { DnsRecord, HostedZone, RecordType } from '../../tasks/cloud/route53-port.js';
import type { KubeObject, KubeRef } from '../../tasks/cloud/kubernetes-port.js';
import type { LookupResult } from '../../tasks/cloud/resolver-port.js';
import type { Mail } from '../../tasks/cloud/mailer-port.js';

/** Zone ids unique across instances, since a test database outlives one test's cloud. */
let zoneSeq = 0;
const runTag = Math.random().toString(36).slice(2, 7).toUpperCase();

const bare = (n: string) => n.toLowerCase().replace(/\.$/, '');
const kubeKey = (r: { kind: string; name: string; namespace?: string }) => `${r.kind}/${r.namespace ?? ''}/${r.name}`;

export class FakeCloud {
  zones = new Map<string, HostedZone>();
  records = new Map<string, DnsRecord>(); // `${zoneId} ${name} ${type}`
  certificates: Certificate[] = [];
  objects = new Map<string, KubeObject>();
  answers = new Map<string, LookupResult | CloudError>(); // `${name} ${type}`
  sent: Mail[] = [];
  /** Whether the provider, its DNS and its certificate service answer ready (Smarter's `is_taskable`). */
  ready = true;
  calls: string[] = [];
  private failures = new Map<string, Error[]>();
  private seq = 0;

  /** The next call of `method` (e.g. `kube.apply`) throws `err`. */
  failNext(method: string, err: Error, times = 1): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), ...Array.from({ length: times }, () => err)]);
  }

  private enter(method: string, resource: string): void {
    this.calls.push(`${method} ${resource}`);
    const queue = this.failures.get(method);
    const err = queue?.shift();
    if (err) throw err;
  }

  addZone(name: string): HostedZone {
    const id = `Z${runTag}${String(++zoneSeq).padStart(5, '0')}`;
    const zone = {
      id,
      name: bare(name),
      nameServers: [`ns-${this.seq}.awsdns-01.org`, `ns-${this.seq}.awsdns-02.net`],
    };
    this.zones.set(id, zone);
    return zone;
  }

  setRecord(zoneId: string, r: DnsRecord): void {
    this.records.set(`${zoneId} ${bare(r.name)} ${r.type}`, { ...r, name: bare(r.name) });
  }

  record(zoneId: string, name: string, type: RecordType): DnsRecord | undefined {
    return this.records.get(`${zoneId} ${bare(name)} ${type}`);
  }

  answer(name: string, type: string, result: LookupResult | CloudError): void {
    this.answers.set(`${bare(name)} ${type}`, result);
  }

  /** cert-manager has issued the host's certificate: Ready, and its Secret exists. */
  issueTls(host: string, namespace: string): void {
    this.objects.set(kubeKey({ kind: 'Certificate', name: `${host}-tls`, namespace }), {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: `${host}-tls`, namespace },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    this.objects.set(kubeKey({ kind: 'Secret', name: `${host}-tls`, namespace }), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${host}-tls`, namespace },
    });
  }

  object(kind: string, name: string, namespace?: string): KubeObject | undefined {
    return this.objects.get(kubeKey({ kind, name, namespace }));
  }

  /** The host as a deploy leaves it: its Ingress, and the Certificate and Secret cert-manager made for it. */
  async deployHost(host: string, namespace: string): Promise<void> {
    this.issueTls(host, namespace);
    await this.deps.kube.apply({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: host, namespace },
    });
  }

  /** The host's Ingress, its Certificate and that Certificate's Secret: what a deploy makes and an undeploy removes. */
  hostObjects(host: string, namespace: string): Array<KubeObject | undefined> {
    return [
      this.object('Ingress', host, namespace),
      this.object('Certificate', `${host}-tls`, namespace),
      this.object('Secret', `${host}-tls`, namespace),
    ];
  }

  readonly deps: CloudDeps = {
    readiness: {
      provider: async () => this.ready,
      dns: async () => this.ready,
      certificates: async () => this.ready,
    },
    route53: {
      findZone: async (domain) => {
        this.enter('route53.findZone', domain);
        return [...this.zones.values()].find((z) => z.name === bare(domain)) ?? null;
      },
      getZone: async (id) => {
        this.enter('route53.getZone', id);
        return this.zones.get(id.replace(/^\/hostedzone\//, '')) ?? null;
      },
      getOrCreateZone: async (domain) => {
        this.enter('route53.getOrCreateZone', domain);
        return [...this.zones.values()].find((z) => z.name === bare(domain)) ?? this.addZone(domain);
      },
      getRecord: async (zoneId, name, type) => {
        this.enter('route53.getRecord', `${name} ${type}`);
        if (!this.zones.has(zoneId)) {
          throw new CloudError('route53', 'get record', `${name} ${type}`, 'NotFound', `no hosted zone ${zoneId}`);
        }
        return this.record(zoneId, name, type) ?? null;
      },
      upsertRecord: async (zoneId, r) => {
        this.enter('route53.upsertRecord', `${r.name} ${r.type}`);
        if (!this.zones.has(zoneId)) {
          throw new CloudError(
            'route53',
            'upsert record',
            `${r.name} ${r.type}`,
            'NotFound',
            `no hosted zone ${zoneId}`,
          );
        }
        this.setRecord(zoneId, r);
      },
      deleteRecord: async (zoneId, name, type) => {
        this.enter('route53.deleteRecord', `${name} ${type}`);
        return this.records.delete(`${zoneId} ${bare(name)} ${type}`);
      },
    },
    acm: {
      find: async (domain) => {
        this.enter('acm.find', domain);
        return [...this.certificates].reverse().find((c) => c.domain === bare(domain)) ?? null;
      },
      describe: async (arn) => {
        this.enter('acm.describe', arn);
        return this.certificates.find((c) => c.arn === arn) ?? null;
      },
      request: async (domain) => {
        this.enter('acm.request', domain);
        const d = bare(domain);
        const cert: Certificate = {
          arn: `arn:aws:acm:us-east-1:123456789012:certificate/${++this.seq}`,
          domain: d,
          status: 'PENDING_VALIDATION',
          validationRecords: [
            { name: `_x${this.seq}.${d}`, type: 'CNAME', ttl: 300, values: [`_y${this.seq}.acm-validations.aws`] },
          ],
        };
        this.certificates.push(cert);
        return cert;
      },
    },
    kube: {
      apply: async (m) => {
        this.enter('kube.apply', kubeKey({ kind: m.kind, name: m.metadata.name, namespace: m.metadata.namespace }));
        const stored = { ...m, metadata: { ...m.metadata, resourceVersion: String(++this.seq) } };
        this.objects.set(kubeKey({ kind: m.kind, name: m.metadata.name, namespace: m.metadata.namespace }), stored);
        return stored;
      },
      get: async (ref: KubeRef) => {
        this.enter('kube.get', kubeKey(ref));
        return this.objects.get(kubeKey(ref)) ?? null;
      },
      list: async (ref) => {
        this.enter('kube.list', `${ref.kind}/${ref.namespace ?? ''}`);
        return [...this.objects.values()].filter(
          (o) => o.kind === ref.kind && (ref.namespace === undefined || o.metadata.namespace === ref.namespace),
        );
      },
      delete: async (ref) => {
        this.enter('kube.delete', kubeKey(ref));
        return this.objects.delete(kubeKey(ref));
      },
    },
    resolver: {
      lookup: async (name, type) => {
        this.enter('resolver.lookup', `${name} ${type}`);
        const a = this.answers.get(`${bare(name)} ${type}`) ?? { status: 'nxdomain' };
        if (a instanceof Error) throw a;
        return a;
      },
    },
    mailer: {
      send: async (mail) => {
        this.enter('mailer.send', mail.to.join(','));
        this.sent.push(mail);
        return true;
      },
    },
    // The vectorstore tasks are tested against the Qdrant and embeddings stand-ins through the real clients.
    vectordb: {
      connect: () => {
        throw new Error('FakeCloud has no vector database: use spec/support/qdrant-standin.ts');
      },
    },
    pinecone: {
      connect: () => {
        throw new Error('FakeCloud has no Pinecone: use spec/support/pinecone-standin.ts');
      },
    },
    embeddings: {
      embed: () => Promise.reject(new Error('FakeCloud has no embeddings: use spec/support/embeddings-standin.ts')),
    },
    // The LLMClient tasks never call EKS; the llmhost tests drive the real EKS client against moto instead.
    eks: new Proxy({} as CloudDeps['eks'], {
      get: (_t, verb) => () =>
        Promise.reject(new CloudError('eks', String(verb), '*', 'Unavailable', 'the fake cloud has no EKS')),
    }),
    autoscaling: {
      terminateInstance: (id) =>
        Promise.reject(
          new CloudError(
            'autoscaling',
            'TerminateInstanceInAutoScalingGroup',
            id,
            'Unavailable',
            'the fake cloud has no Auto Scaling',
          ),
        ),
    },
    // The MCP and LLM ports are tested on their real clients against real servers (spec/support/mcp-server.ts,
    // llm-standin.ts); the infrastructure tasks never call them.
    mcp: { discover: () => Promise.reject(new Error('FakeCloud has no MCP servers')) },
    llm: new Proxy({} as CloudDeps['llm'], {
      get: () => () => Promise.reject(new Error('FakeCloud has no LLM providers')),
    }),
  };
}
