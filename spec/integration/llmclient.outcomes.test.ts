/**
 * Where Smarter's LLMClient tasks log and return rather than fail (real MariaDB, in-memory FakeCloud): a missing
 * LLMClient (`deploy_default_api.py`, `undeploy_default_api.py`, `deploy_custom_api.py`), and a missing API zone,
 * which `destroy_domain_A_record.py` logs as "Nothing to do" so that `delete_default_api.py` and
 * `undeploy_default_api.py`, which call it synchronously, go on.
 */
import { defaultHost } from '../../tasks/llmclient/hosts.js';
import { llmclientTasks } from '../../tasks/llmclient/index.js';
import { continueDefaultApiDeployment } from '../../tasks/llmclient/continue-default-api-deployment.js';
import { deleteDefaultApi } from '../../tasks/llmclient/delete-default-api.js';
import { deployCustomApi } from '../../tasks/llmclient/deploy-custom-api.js';
import { deployDefaultApi } from '../../tasks/llmclient/deploy-default-api.js';
import { destroyDomainARecord } from '../../tasks/llmclient/destroy-domain-a-record.js';
import { undeployDefaultApi } from '../../tasks/llmclient/undeploy-default-api.js';
import { verifyCustomDomain } from '../../tasks/llmclient/verify-custom-domain.js';
import { findLlmclient } from '../../tasks/llmclient/rows.js';
import { type SmarterDeps, taskEnv } from '../../tasks/env/task-env.js';
import { CheckRunner } from '../support/check-runner.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';
import { FakeCloud } from '../support/fake-cloud.js';
import { type LogLine, recordingLogger } from '../support/logs.js';
import { nameOf } from '../support/task-names.js';
import { alphaSettings } from '../support/alpha-settings.js';

const env = taskEnv(alphaSettings());
// As Smarter's settings derive them (`<env>.api.<platform subdomain>.<root>`).
const API = env.apiDomain;
const NS = env.namespace;
/** An account number Smarter's check accepts (`dddd-dddd-dddd`), unique per seeded account. */
const validAccountNumber = (accountId: number) =>
  `3141-${String(Math.floor(accountId / 10000) % 10000).padStart(4, '0')}-${String(accountId % 10000).padStart(4, '0')}`;
const tasks = llmclientTasks(env);

let t: TestDatabase;
let ids: Awaited<ReturnType<typeof seed>>;
let fake: FakeCloud;
let lines: LogLine[];
let runner: CheckRunner<SmarterDeps>;

beforeAll(async () => {
  t = await createTestDatabase('llc_outcome');
});
afterAll(async () => t?.drop());

beforeEach(async () => {
  ids = await seed(t.db);
  await t.db.execute('UPDATE account_account SET account_number = ? WHERE id = ?', [
    validAccountNumber(ids.accountId),
    ids.accountId,
  ]);
  fake = new FakeCloud();
  const logger = recordingLogger();
  lines = logger.lines;
  runner = new CheckRunner(tasks, { db: t.db, cloud: fake.deps }, logger);
});

const at = (level: string) => lines.filter((l) => l.level === level).map((l) => l.message);

test.each([
  [
    nameOf(deployDefaultApi),
    'error',
    'deploy_default_api() LLMClient 987654321 not found (llmclient_llmclient). Nothing to do, returning.',
  ],
  [
    nameOf(continueDefaultApiDeployment),
    'error',
    'continue_default_api_deployment() LLMClient 987654321 not found (llmclient_llmclient). Nothing to do, returning.',
  ],
  [nameOf(undeployDefaultApi), 'error', 'undeploy_default_api() LLMClient 987654321 not found (llmclient_llmclient).'],
  [
    nameOf(deployCustomApi),
    'warn',
    'deploy_custom_api() LLMClient 987654321 not found (llmclient_llmclient). Nothing to do.',
  ],
])(
  'own wiring: %s of an LLMClient that does not exist: logged, None, nothing else done',
  async (name, level, message) => {
    runner.send(name, { llmclient_id: 987654321 });
    const runs = await runner.drain();
    expect(runs.map((r) => [r.result, r.error])).toEqual([[null, undefined]]);
    expect(at(level)).toEqual([message]);
    expect(fake.calls).toEqual([]);
  },
);

describe("own wiring: the API domain's zone is missing", () => {
  test('destroy_domain_A_record: logged, success', async () => {
    runner.send(nameOf(destroyDomainARecord), { hostname: `x.${API}`, api_host_domain: API });
    const runs = await runner.drain();
    expect(runs.map((r) => [r.result, r.error])).toEqual([[null, undefined]]);
    expect(at('error')).toEqual([`destroy_domain_A_record() DNS zone not found for ${API}. Nothing to do, returning.`]);
  });

  test('delete_default_api: logged, then the Ingress, Certificate and Secret are deleted all the same', async () => {
    const l = (await findLlmclient(t.db, ids.llmclientId))!;
    const host = defaultHost(l, API);
    await fake.deployHost(host, NS);
    runner.send(nameOf(deleteDefaultApi), {
      name: l.name,
      api_url: `https://${host}/`,
      account_number: l.accountNumber,
    });
    const runs = await runner.drain();
    expect(runs.map((r) => [r.result, r.error])).toEqual([[null, undefined]]);
    expect(at('error')).toEqual([`destroy_domain_A_record() DNS zone not found for ${API}. Nothing to do, returning.`]);
    expect(fake.hostObjects(host, NS)).toEqual([undefined, undefined, undefined]);
  });

  test('undeploy_default_api: logged, then the LLMClient is not deployed, Not Verified, all the same', async () => {
    await t.db.execute(
      "UPDATE llmclient_llmclient SET deployed = 1, dns_verification_status = 'Verified' WHERE id = ?",
      [ids.llmclientId],
    );
    runner.send(nameOf(undeployDefaultApi), { llmclient_id: ids.llmclientId });
    const runs = await runner.drain();
    expect(runs.map((r) => [r.result, r.error])).toEqual([[null, undefined]]);
    expect(
      (
        await t.db.select('SELECT deployed, dns_verification_status AS dns FROM llmclient_llmclient WHERE id = ?', [
          ids.llmclientId,
        ])
      )[0],
    ).toEqual({ deployed: 0, dns: 'Not Verified' });
  });
});

describe('own wiring: the cloud is not ready (utils.is_taskable)', () => {
  test('deploy_default_api: the gate answers first: None, logged at info, nothing called', async () => {
    fake.ready = false;
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    const runs = await runner.drain();
    expect(runs.map((r) => [r.result, r.error])).toEqual([[null, undefined]]);
    expect(at('info')).toEqual(['is_taskable() the cloud provider is not ready. Request is not taskable.']);
    expect(fake.calls).toEqual([]);
  });

  test('verify_custom_domain looks its row up before the gate: unknown → False; not registered → Failed; registered but not ready → False', async () => {
    fake.ready = false;
    const { insertId } = await t.db.execute(
      "INSERT INTO llmclient_llmclientcustomdomain (aws_hosted_zone_id, domain_name, name, description, version, annotations, user_profile_id, verification_status, verification_message, created_at, updated_at) VALUES ('', ?, 'u', '', '1.0.0', '[]', ?, 'Not Verified', '', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
      [`never${ids.accountId}.example.net`, ids.profileId],
    );
    runner.send(nameOf(verifyCustomDomain), { custom_domain_id: 987654321 });
    runner.send(nameOf(verifyCustomDomain), { custom_domain_id: insertId });
    runner.send(nameOf(verifyCustomDomain), { hosted_zone_id: 'Z0000000000000000000' });
    const runs = await runner.drain();
    expect(runs.map((r) => [r.result, r.error])).toEqual([
      [false, undefined],
      [false, undefined],
      [false, undefined],
    ]);
    expect(
      (
        await t.db.select('SELECT verification_status AS s FROM llmclient_llmclientcustomdomain WHERE id = ?', [
          insertId,
        ])
      )[0]?.s,
    ).toBe('Failed');
    expect(at('info')).toEqual(['is_taskable() the cloud provider is not ready. Request is not taskable.']);
    expect(fake.calls).toEqual([]);
  });
});
