/**
 * The readiness gate on a real worker (RabbitMQ, Redis results, MariaDB), as on a laptop or compose install
 * without an AWS account: Smarter's LLMClient tasks begin with `is_taskable()`
 * (`smarter/smarter/apps/llmclient/tasks/utils.py`) and end at once, successfully, with None (False for
 * `register_custom_domain`, `verify_domain` and `verify_custom_domain`), so nothing fails, retries or is
 * dead-lettered. AWS is moto behind a recording proxy: without credentials it must see no request at all.
 */
import { continueDefaultApiDeployment } from '../../tasks/llmclient/continue-default-api-deployment.js';
import { createCustomDomainDnsRecord } from '../../tasks/llmclient/create-custom-domain-dns-record.js';
import { deleteDefaultApi } from '../../tasks/llmclient/delete-default-api.js';
import { deployCustomApi } from '../../tasks/llmclient/deploy-custom-api.js';
import { deployDefaultApi } from '../../tasks/llmclient/deploy-default-api.js';
import { destroyDomainARecord } from '../../tasks/llmclient/destroy-domain-a-record.js';
import { registerCustomDomain } from '../../tasks/llmclient/register-custom-domain.js';
import { undeployDefaultApi } from '../../tasks/llmclient/undeploy-default-api.js';
import { verifyCertificate } from '../../tasks/llmclient/verify-certificate.js';
import { verifyCustomDomain } from '../../tasks/llmclient/verify-custom-domain.js';
import { verifyDomain } from '../../tasks/llmclient/verify-domain.js';
import { withChannel } from '../support/amqp.js';
import { startFaultProxy, type FaultProxy } from '../support/aws-faults.js';
import { testCloud } from '../support/cloud.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';
import type { Harness } from '../support/harness.js';
import { startInfrastructureWorker } from '../support/smarter-harness.js';
import { AWS_CREDENTIAL_VARS, type Moto, startMoto } from '../support/moto.js';
import { ResultReader } from '../support/results.js';
import { nameOf } from '../support/task-names.js';

const API = 'alpha.api.example.com';

let t: TestDatabase;
let moto: Moto;
let aws: FaultProxy;
let h: Harness;
const results = new ResultReader();
const saved: Record<string, string | undefined> = {};

function setEnv(vars: Record<string, string | undefined>): void {
  for (const [k, v] of Object.entries(vars)) {
    if (!(k in saved)) saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

beforeAll(async () => {
  t = await createTestDatabase('llc_ready');
  moto = await startMoto();
  aws = await startFaultProxy(moto.endpoint);
  setEnv({
    AWS_ENDPOINT_URL: aws.endpoint,
    AWS_REGION: 'us-east-1',
    ...Object.fromEntries(AWS_CREDENTIAL_VARS.map((k) => [k, undefined])),
  });
  h = await startInfrastructureWorker({ db: t.db, cloud: testCloud() });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await aws?.stop();
  await moto?.stop();
  await results.close();
  await t?.drop();
});

async function call(name: string, kwargs: Record<string, unknown>): Promise<{ status: string; result: unknown }> {
  const id = await h.worker.publisher.apply(name, [], kwargs, { queue: h.queue });
  const meta = await results.ready(id, 30_000);
  return { status: String(meta.status), result: meta.result };
}

const deadLetters = () =>
  withChannel(async (ch) => (await ch.checkQueue(`${h.queue}.dead_letter`)).messageCount).catch(() => 0);

test("own wiring: without AWS credentials every LLMClient task succeeds at once with Smarter's value: AWS sees no request, nothing is dead-lettered, no row changes", async () => {
  const ids = await seed(t.db);
  const [a] = await t.db.select('SELECT account_number FROM account_account WHERE id = ?', [ids.accountId]);
  const host = `bot.${String(a?.account_number)}.${API}`;
  const cases: Array<[string, Record<string, unknown>, unknown]> = [
    [nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId }, null],
    [nameOf(continueDefaultApiDeployment), { llmclient_id: ids.llmclientId, stage: 'certificate' }, null],
    [nameOf(verifyDomain), { domain_name: host, llmclient_id: ids.llmclientId }, false],
    [nameOf(verifyCustomDomain), { hosted_zone_id: 'Z0000000000000000000' }, false],
    [nameOf(registerCustomDomain), { account_id: ids.accountId, domain_name: 'customer.example.org' }, false],
    [nameOf(deployCustomApi), { llmclient_id: ids.llmclientId }, null],
    [
      nameOf(createCustomDomainDnsRecord),
      {
        llmclient_custom_domain_id: 1,
        record_name: 'www.customer.example.org',
        record_type: 'A',
        record_value: '192.0.2.1',
      },
      null,
    ],
    [
      nameOf(deleteDefaultApi),
      { name: 'bot', api_url: `https://${host}/`, account_number: String(a?.account_number) },
      null,
    ],
    [nameOf(destroyDomainARecord), { hostname: host, api_host_domain: API }, null],
    [nameOf(undeployDefaultApi), { llmclient_id: ids.llmclientId }, null],
    [
      nameOf(verifyCertificate),
      { certificate_arn: 'arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000' },
      null,
    ],
  ];
  const before = await t.db.select(
    'SELECT deployed, dns_verification_status, tls_certificate_issuance_status, updated_at FROM llmclient_llmclient WHERE id = ?',
    [ids.llmclientId],
  );
  for (const [name, kwargs, expected] of cases) {
    expect([name, await call(name, kwargs)]).toEqual([name, { status: 'SUCCESS', result: expected }]);
  }
  expect(aws.forwarded).toEqual([]);
  expect(aws.faulted).toEqual([]);
  expect(await deadLetters()).toBe(0);
  expect(
    await t.db.select(
      'SELECT deployed, dns_verification_status, tls_certificate_issuance_status, updated_at FROM llmclient_llmclient WHERE id = ?',
      [ids.llmclientId],
    ),
  ).toEqual(before);
  expect(await t.db.select('SELECT id FROM llmclient_llmclientcustomdomain')).toEqual([]);
}, 120_000);

test('own wiring: with credentials, the same worker asks STS once, then does the work', async () => {
  setEnv({ AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing' });
  const host = `gone.${API}`;
  // The API domain's zone, made through the proxy too: the A record is not there, which is success.
  const zone = await testCloud().route53.getOrCreateZone(API);
  expect(zone.name).toBe(API);
  const seen = aws.forwarded.length;
  expect(await call(nameOf(destroyDomainARecord), { hostname: host, api_host_domain: API })).toEqual({
    status: 'SUCCESS',
    result: null,
  });
  expect(await call(nameOf(destroyDomainARecord), { hostname: host, api_host_domain: API })).toEqual({
    status: 'SUCCESS',
    result: null,
  });
  const sts = aws.forwarded.slice(seen).filter((a) => a === 'POST /');
  expect(sts).toHaveLength(1);
  expect(aws.forwarded.slice(seen).some((a) => a.includes('hostedzonesbyname'))).toBe(true);
}, 60_000);
