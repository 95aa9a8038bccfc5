/**
 * What the shipped suite's cases (spec/support/shipped-cases-*.ts) are made of: a case per Smarter task name, what it
 * sends and the outcome it checks, and the readers and fixtures they share.
 */
import { type DjangoTable } from '../../tasks/db/django-defaults.js';
import { insertRow } from './django-rows.js';
import { API, NS } from './shipped-world.js';
import { w, type Meta, ids, one } from './shipped-suite.js';

export interface Prepared {
  args?: unknown[];
  kwargs?: Record<string, unknown>;
  /** The state Smarter's task ends in for this call. */
  state: 'SUCCESS' | 'FAILURE';
  /** Runs beside the task once it is sent: the outside world changing while the task checks (cert-manager, DNS…). */
  meanwhile?: () => Promise<void>;
  /** Smarter's outcome, once the task's own message has settled. */
  check: (m: Meta) => Promise<void>;
}

export interface Case {
  /** The task's name after `smarter.apps.`. */
  task: string;
  /** Sent after the cases of earlier phases have settled (what it acts on is their outcome). */
  phase: 1 | 2 | 3;
  prepare: () => Promise<Prepared>;
}

export const request = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'Bonjour, ça va ?' }],
  session_key: 'sk-py',
};
export const response = { id: 'chatcmpl-1', choices: [{ message: { role: 'assistant', content: 'Oui' } }] };
export const messages = [
  { role: 'user', content: 'Bonjour, ça va ?' },
  { role: 'assistant', content: 'Oui' },
];
export const GPU_SPEC = {
  engine: { name: 'vllm' },
  model: { repository: 'meta-llama/Llama-3.1-8B-Instruct' },
  resources: { cpu: '4', memory: '16Gi', gpuCount: 1 },
  network: { ingress: true },
};
/** A row named `name` of a Smarter model with an owner, owned by the suite's profile as its other rows are. */
export const profileRow = (table: DjangoTable, name: string, values: Record<string, unknown>) =>
  insertRow(w.t.db, table, { name, user_profile_id: ids.profileId, ...values });
export const count = async (q: string, p: unknown[] = []) => Number((await one(q, p))?.n ?? 0);
export const llmclientRow = async (id: number) =>
  one(
    'SELECT deployed, dns_verification_status AS dns, tls_certificate_issuance_status AS tls FROM llmclient_llmclient WHERE id = ?',
    [id],
  );
export const ingress = (name: string) =>
  w.kube.object({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name, namespace: NS });
export const mailsTo = (address: string) => w.smtp.messages.filter((m) => m.to.includes(address));
/** A cert-manager Certificate that issuance made Ready, with its TLS Secret, as for an Ingress applied earlier. */
export function issuedCertificate(host: string): void {
  w.kube.put(
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: `${host}-tls`, namespace: NS },
      spec: { secretName: `${host}-tls`, dnsNames: [host], issuerRef: { name: API, kind: 'ClusterIssuer' } },
    },
    'cert-manager',
  );
  w.kube.issueCertificate({ name: `${host}-tls`, namespace: NS });
}
export async function customDomain(
  profileId: number,
  domain: string,
  o: { zoneId: string; status: string },
): Promise<number> {
  return (
    await w.t.db.execute(
      `INSERT INTO llmclient_llmclientcustomdomain (aws_hosted_zone_id, domain_name, name, description, version, annotations, user_profile_id,
         verification_status, verified_at, verification_message, created_at, updated_at)
       VALUES (?, ?, ?, '', '1.0.0', '[]', ?, ?, ${o.status === 'Verified' ? 'UTC_TIMESTAMP(6)' : 'NULL'}, '', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
      [o.zoneId, domain, `d${Math.random().toString(36).slice(2, 8)}`, profileId, o.status],
    )
  ).insertId;
}
export const qdrantPoints = (collection: Map<string, { points: Map<string, { payload: Record<string, unknown> }> }>) =>
  [...collection.values()].flatMap((c) => [...c.points.values()]);
export const pointsOf = (docId: number, standIn = w.qdrant) =>
  qdrantPoints(standIn.collections).filter(
    (p) => (p.payload.metadata as { document_id?: unknown } | undefined)?.document_id === docId,
  );
export const docRow = async (id: number) =>
  one('SELECT status, status_message, chunk_count FROM vectorstore_vectorstoredocument WHERE id = ?', [id]);
export const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(4);

/** State shared between phases: the LLMHost launched in phase 1 and destroyed in phase 3, the documents… */
export const shared: { llmhost?: number; compute?: number; chargeLocator?: string; docToDelete?: number } = {};
