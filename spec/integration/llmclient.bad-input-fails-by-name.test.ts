/**
 * Bad input and a hostile outside world, through the real clients and a real worker: each case is a FAILURE
 * result naming the resource and the verb (never a crash: the worker goes on serving), except where Smarter logs
 * and returns (a missing LLMClient, a missing zone, a refused Ingress) and a mail server that is down, which loses
 * only the e-mail.
 */
import { mailFailures } from '../../tasks/llmclient/mail.js';
import { deployDefaultApi } from '../../tasks/llmclient/deploy-default-api.js';
import { destroyDomainARecord } from '../../tasks/llmclient/destroy-domain-a-record.js';
import { registerCustomDomain } from '../../tasks/llmclient/register-custom-domain.js';
import { waitFor } from '../support/wait.js';
import { type TestDatabase, createTestDatabase, seed, untilRow } from '../support/db.js';
import type { Harness } from '../support/harness.js';
import { startInfrastructureWorker } from '../support/smarter-harness.js';
import { type World, startWorld } from '../support/infra-world.js';
import { ResultReader } from '../support/results.js';
import { nameOf } from '../support/task-names.js';
import { newLlmclient } from '../support/smarter-db.js';

const API = 'alpha.api.platform.example.com';
const NS = 'example-platform-alpha';

let t: TestDatabase;
let world: World;
let h: Harness;
const results = new ResultReader();

beforeAll(async () => {
  t = await createTestDatabase('infra_bad');
  world = await startWorld({ apiDomain: API, namespace: NS });
  h = await startInfrastructureWorker({ db: t.db, cloud: world.cloud });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await world?.stop();
  await results.close();
  await t?.drop();
});

async function call(
  name: string,
  kwargs: Record<string, unknown>,
): Promise<{ status: string; type: string; message: string }> {
  const id = await h.worker.publisher.apply(name, [], kwargs, { queue: h.queue });
  const meta = await results.ready(id, 30_000);
  const r = meta.result as { exc_type?: string; exc_message?: unknown[] } | null;
  const first = r?.exc_message?.[0];
  return {
    status: String(meta.status),
    type: String(r?.exc_type ?? ''),
    message: typeof first === 'string' ? first : JSON.stringify(first ?? ''),
  };
}

const llmclient = () => newLlmclient(t.db, API);

const tls = async (id: number) =>
  (await t.db.select('SELECT tls_certificate_issuance_status AS s FROM llmclient_llmclient WHERE id = ?', [id]))[0]?.s;

// deploy_default_api.py: "LLMClient %s not found. Nothing to do, returning."
test('own wiring: an unknown LLMClient: SUCCESS, None, as Smarter', async () => {
  expect(await call(nameOf(deployDefaultApi), { llmclient_id: 987654321 })).toMatchObject({
    status: 'SUCCESS',
    type: '',
  });
});

test('own wiring: a malformed domain: FAILURE SmarterValueError naming the argument', async () => {
  const ids = await seed(t.db);
  expect(await call(nameOf(registerCustomDomain), { account_id: ids.accountId, domain_name: 'bad..domain' })).toEqual({
    status: 'FAILURE',
    type: 'SmarterValueError',
    message: 'register_custom_domain domain_name: "bad..domain" is not a valid domain name',
  });
});

// destroy_domain_a_record.py: "DNS zone not found for %s. Nothing to do, returning."
test('own wiring: a hosted zone that does not exist: SUCCESS, nothing to delete, as Smarter', async () => {
  expect(
    await call(nameOf(destroyDomainARecord), {
      hostname: 'x.nozone.example.org',
      api_host_domain: 'nozone.example.org',
    }),
  ).toMatchObject({ status: 'SUCCESS', type: '' });
});

test('own wiring: AWS throttling twice, then success: the SDK retries and the task succeeds', async () => {
  world.aws.failNext(2, 'Throttling');
  expect((await call(nameOf(destroyDomainARecord), { hostname: `gone.${API}`, api_host_domain: API })).status).toBe(
    'SUCCESS',
  );
  expect(world.aws.faulted).toHaveLength(2);
});

test('own wiring: AWS 403: FAILURE naming Route 53, the verb and the resource, not retried', async () => {
  const l = await llmclient();
  const before = world.aws.forwarded.length + world.aws.faulted.length;
  world.aws.failNext(1, 'AccessDenied');
  const r = await call(nameOf(deployDefaultApi), { llmclient_id: l.id });
  expect(r).toMatchObject({ status: 'FAILURE', type: 'CloudError' });
  expect(r.message).toMatch(
    new RegExp(
      `^route53 \\S.* ${API.replace(/\./g, '\\.')}.*: AccessDenied: AccessDenied.*not authorized to perform: route53:`,
    ),
  );
  // One request, refused: no autoretry sent it again.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(world.aws.forwarded.length + world.aws.faulted.length - before).toBe(1);
});

test.each([
  [409, 'Conflict'],
  [403, 'AccessDenied'],
] as const)(
  'own wiring: Kubernetes %i on the Ingress: SUCCESS, TLS Failed, no retry and no e-mail, as Smarter (%s)',
  async (status, _kind) => {
    const l = await llmclient();
    world.kube.failNext({ status, method: 'PATCH' });
    const r = await call(nameOf(deployDefaultApi), { llmclient_id: l.id });
    expect(r).toMatchObject({ status: 'SUCCESS', type: '' });
    expect(await tls(l.id)).toBe('Failed');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(world.mails().filter((m) => m.to.includes(l.contact))).toEqual([]);
  },
);

test('own wiring: SMTP down: the deployment still completes; the lost e-mail is logged and counted', async () => {
  const l = await llmclient();
  world.resolve(l.host);
  await world.smtp.goDown();
  const count = async () => (await mailFailures.get()).values.reduce((n, v) => n + v.value, 0);
  const before = await count();
  expect((await call(nameOf(deployDefaultApi), { llmclient_id: l.id })).status).toBe('SUCCESS');
  // The Ingress is applied and its Certificate made: cert-manager issues it before the first check.
  world.issueTls(l.host);
  await untilRow(
    t.db,
    "SELECT 1 FROM llmclient_llmclient WHERE id = ? AND deployed = 1 AND dns_verification_status = 'Verified'",
    [l.id],
    30_000,
    200,
  );
  await waitFor(async () => (await count()) === before + 1, 15_000);
  expect(world.mails().some((m) => m.to.includes(l.contact))).toBe(false);
}, 60_000);
