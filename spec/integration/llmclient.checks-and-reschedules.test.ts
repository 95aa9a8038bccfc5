/**
 * Smarter's LLMClient infrastructure tasks on a real MariaDB with Smarter's tables and in-memory clouds
 * (spec/support/fake-cloud.ts): every task's checks, reschedules, rows and e-mails, walked in-process with the
 * worker's own reschedule planning (spec/support/check-runner.ts).
 */
import { SMARTER_CATALOG } from '../../tasks/catalog.js';
import { CloudError } from '../../tasks/cloud/errors.js';
import { llmclientTasks } from '../../tasks/llmclient/index.js';
import { mailFailures } from '../../tasks/llmclient/mail.js';
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
import { isPermanent, type SmarterDeps, taskEnv } from '../../tasks/env/task-env.js';
import { CheckRunner } from '../support/check-runner.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';
import { insertRow } from '../support/django-rows.js';
import { recordingLogger } from '../support/logs.js';
import { FakeCloud } from '../support/fake-cloud.js';
import { nameOf } from '../support/task-names.js';
import { alphaSettings } from '../support/alpha-settings.js';

const API = 'alpha.api.platform.example.com';
const NS = 'example-platform-alpha';
const LB = ['192.0.2.10'];
const env = taskEnv(alphaSettings());
// The llmclient app's eleven infrastructure tasks; its twelfth, create_llmclient_request, is operational.
const ELEVEN = [...SMARTER_CATALOG]
  .filter(([n, kind]) => n.startsWith('smarter.apps.llmclient.') && kind === 'infrastructure')
  .map(([n]) => n);
const tasks = llmclientTasks(env).filter((x) => ELEVEN.includes(x.name));

let t: TestDatabase;
let ids: Awaited<ReturnType<typeof seed>>;
let accountNumber: string;
let host: string;
let cloud: FakeCloud;
let runner: CheckRunner<SmarterDeps>;

beforeAll(async () => {
  t = await createTestDatabase('infra');
});
afterAll(async () => t.drop());

/** A Smarter account number (`\d{4}-\d{4}-\d{4}`) no other account of the test database has. */
const validAccountNumber = (accountId: number) =>
  `3141-${String(Math.floor(accountId / 10000) % 10000).padStart(4, '0')}-${String(accountId % 10000).padStart(4, '0')}`;

/** A user of the account who is not its admin, with a profile in it: `{ profileId, username }`. */
async function addMember(accountId: number, username: string): Promise<{ profileId: number; username: string }> {
  const u = await t.db.execute('INSERT INTO auth_user (username, is_staff) VALUES (?, 0)', [username]);
  const p = await t.db.execute(
    'INSERT INTO account_userprofile (user_id, account_id, created_at, updated_at) VALUES (?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))',
    [u.insertId, accountId],
  );
  return { profileId: p.insertId, username };
}

beforeEach(async () => {
  ids = await seed(t.db);
  await t.db.execute("UPDATE llmclient_llmclient SET name = CONCAT('Support_Bot', id) WHERE id = ?", [ids.llmclientId]);
  // The seeded owner is the account's admin (its first staff profile), whose LLMClients' hosts carry no user name.
  await t.db.execute('UPDATE auth_user SET is_staff = 1 WHERE id = ?', [ids.userId]);
  accountNumber = validAccountNumber(ids.accountId);
  await t.db.execute('UPDATE account_account SET account_number = ? WHERE id = ?', [accountNumber, ids.accountId]);
  host = `support-bot${ids.llmclientId}.${accountNumber}.${API}`;
  await t.db.execute(
    "INSERT INTO account_accountcontact (first_name, last_name, email, is_primary, account_id, created_at, updated_at) VALUES ('Ada', 'L', ?, 1, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)), ('Bob', 'M', ?, 0, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
    [`ada${ids.accountId}@example.org`, ids.accountId, `bob${ids.accountId}@example.org`, ids.accountId],
  );
  cloud = new FakeCloud();
  const apiZone = cloud.addZone(API);
  cloud.setRecord(apiZone.id, { name: API, type: 'A', ttl: 300, values: LB });
  runner = new CheckRunner(tasks, { db: t.db, cloud: cloud.deps });
});

const llmclient = async () =>
  (
    await t.db.select(
      'SELECT deployed, dns_verification_status AS dns, tls_certificate_issuance_status AS tls FROM llmclient_llmclient WHERE id = ?',
      [ids.llmclientId],
    )
  )[0];
const apiZoneId = () => [...cloud.zones.values()].find((z) => z.name === API)?.id ?? '';

describe('own wiring: registry', () => {
  test("the eleven tasks answer under Smarter's names, on the infrastructure queue, with its autoretry", () => {
    expect(tasks.map((x) => x.name).sort()).toEqual([...ELEVEN].sort());
    expect(ELEVEN).toHaveLength(11);
    expect(new Set(tasks.map((x) => x.queue))).toEqual(new Set(['infrastructure_celery_task_queue']));
    for (const x of tasks) expect(x.retry).toMatchObject({ maxRetries: 3, retryBackoff: true });
    expect(nameOf(destroyDomainARecord)).toBe(
      'smarter.apps.llmclient.tasks.destroy_domain_a_record.destroy_domain_A_record',
    );
  });

  test.each([
    [nameOf(deployDefaultApi), ['llmclient_id', 'with_domain_verification']],
    [nameOf(continueDefaultApiDeployment), ['llmclient_id', 'with_domain_verification', 'task_id', 'stage', 'attempt']],
    [
      nameOf(verifyDomain),
      ['domain_name', 'record_type', 'llmclient_id', 'activate_llmclient', 'hosted_zone_id', 'task_id', 'attempt'],
    ],
    [
      nameOf(verifyCustomDomain),
      ['hosted_zone_id', 'sleep_interval', 'max_attempts', 'attempt', 'task_id', 'custom_domain_id'],
    ],
    [nameOf(registerCustomDomain), ['account_id', 'domain_name']],
    [nameOf(deployCustomApi), ['llmclient_id']],
    [
      nameOf(createCustomDomainDnsRecord),
      ['llmclient_custom_domain_id', 'record_name', 'record_type', 'record_value', 'record_ttl'],
    ],
    [nameOf(deleteDefaultApi), ['name', 'api_url', 'account_number', 'account_id']],
    [nameOf(destroyDomainARecord), ['hostname', 'api_host_domain', 'task_id']],
    [nameOf(undeployDefaultApi), ['llmclient_id']],
    [nameOf(verifyCertificate), ['certificate_arn', 'attempt']],
  ])("%s takes positional arguments in Smarter's order", (name, order) => {
    expect(tasks.find((x) => x.name === name)?.argNames).toEqual(order);
  });
});

describe('own wiring: deploy_default_api → continue_default_api_deployment', () => {
  test('walks certificate then domain: first check after 600 s, then every 60 s, then every 300 s; ends deployed, Verified, one e-mail', async () => {
    const first = runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.drain((msg) => {
      if (msg.name !== nameOf(continueDefaultApiDeployment)) return;
      const attempt = Number(msg.kwargs.attempt ?? 0);
      if (msg.kwargs.stage === 'certificate' && attempt === 2) cloud.issueTls(host, NS);
      if (msg.kwargs.stage === 'domain' && attempt === 3) cloud.answer(host, 'A', { status: 'found', values: LB });
    });
    const [deploy] = runner.runsOf(nameOf(deployDefaultApi));
    expect(deploy?.error).toBeUndefined();
    const checks = runner.runsOf(nameOf(continueDefaultApiDeployment));
    expect(checks.map((r) => [r.kwargs.stage, r.kwargs.attempt ?? 0, r.countdown])).toEqual([
      ['certificate', 0, 600],
      ['certificate', 1, 60],
      ['certificate', 2, 60],
      ['domain', 1, 300],
      ['domain', 2, 300],
      ['domain', 3, 300],
    ]);
    // The first run's id is carried as data by every continuation.
    expect(new Set(checks.map((r) => r.kwargs.task_id))).toEqual(new Set([first]));
    expect(checks.every((r) => r.error === undefined)).toBe(true);
    expect(await llmclient()).toEqual({ deployed: 1, dns: 'Verified', tls: 'Issued' });
    expect(cloud.record(apiZoneId(), host, 'A')).toMatchObject({ values: LB, ttl: 600 });
    expect(cloud.sent).toHaveLength(1);
    expect(cloud.sent[0]).toMatchObject({ to: [`ada${ids.accountId}@example.org`] });
    expect(cloud.sent[0]?.subject).toContain(`https://${host}/`);
  });

  test("applies the Ingress of Smarter's template: traefik websecure, cert-manager issuer, TLS secret <host>-tls, smarter:8000", async () => {
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.runOne(runner.pending.shift()!);
    const ing = cloud.object('Ingress', host, NS);
    expect(ing?.metadata.annotations).toEqual({
      'kubernetes.io/tls-acme': 'true',
      'cert-manager.io/cluster-issuer': API,
      'traefik.ingress.kubernetes.io/router.entrypoints': 'websecure',
      'traefik.ingress.kubernetes.io/router.middlewares': `${NS}-cors@kubernetescrd,${NS}-https-redirect@kubernetescrd`,
    });
    // smarter/smarter/apps/llmclient/k8s/ingress.yaml.tpl
    expect(ing?.metadata.labels).toEqual({
      'app.kubernetes.io/application-group': 'example',
      'app.kubernetes.io/name': 'example',
    });
    expect(ing?.spec).toMatchObject({
      ingressClassName: 'traefik',
      tls: [{ hosts: [host], secretName: `${host}-tls` }],
      rules: [{ host, http: { paths: [{ backend: { service: { name: 'smarter', port: { number: 8000 } } } }] } }],
    });
    expect((await llmclient())?.tls).toBe('Requested');
    expect(runner.pending.map((m) => [m.name, m.countdown, m.kwargs.stage])).toEqual([
      [nameOf(continueDefaultApiDeployment), 600, 'certificate'],
    ]);
  });

  // Smarter sends no e-mail when a deployment fails (deploy_default_api.py; its llmclient_deploy_failed receiver only logs).
  test('a certificate that never becomes Ready ends TLS Failed after exactly 30 checks, and no e-mail', async () => {
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.drain();
    const checks = runner.runsOf(nameOf(continueDefaultApiDeployment));
    expect(checks).toHaveLength(30);
    expect(checks.every((r) => r.kwargs.stage === 'certificate')).toBe(true);
    expect(checks.at(-1)?.result).toBeNull();
    expect(await llmclient()).toMatchObject({ deployed: 0, tls: 'Failed' });
    expect(cloud.sent).toEqual([]);
  });

  test('a domain that never resolves ends DNS Failed after 48 domain checks, and no e-mail', async () => {
    cloud.issueTls(host, NS);
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.drain();
    // The certificate check finds it Ready and makes domain check 0 in the same run; then 47 more.
    const checks = runner.runsOf(nameOf(continueDefaultApiDeployment));
    expect(checks.map((r) => `${String(r.kwargs.stage)}:${Number(r.kwargs.attempt ?? 0)}`)).toEqual([
      'certificate:0',
      ...Array.from({ length: 47 }, (_, i) => `domain:${i + 1}`),
    ]);
    expect(checks.slice(1).every((r) => r.countdown === 300)).toBe(true);
    expect(await llmclient()).toMatchObject({ deployed: 0, dns: 'Failed', tls: 'Issued' });
    expect(cloud.sent).toEqual([]);
  });

  test('a cluster that does not answer during a certificate check reads as not ready: checked again, not failed', async () => {
    runner.send(nameOf(continueDefaultApiDeployment), { llmclient_id: ids.llmclientId, stage: 'certificate' });
    cloud.failNext(
      'kube.get',
      new CloudError('kubernetes', 'get', `Ingress ${NS}/${host}`, 'Unavailable', 'connect ECONNREFUSED'),
      3,
    );
    const first = await runner.runOne(runner.pending.shift()!);
    expect(first.error).toBeUndefined();
    expect(runner.pending.map((m) => [m.kwargs.stage, m.kwargs.attempt])).toEqual([['certificate', 1]]);
  });

  // smarter/smarter/apps/infrastructure/services/kubernetes.py: `get_resource` reads any failure as "not there".
  test('a 403 reading the Certificate counts as not ready: checked again, and after 30 checks TLS Failed, never a FAILURE', async () => {
    cloud.failNext(
      'kube.get',
      new CloudError(
        'kubernetes',
        'get',
        `Certificate ${NS}/${host}-tls`,
        'AccessDenied',
        'certificates.cert-manager.io is forbidden',
      ),
      1000,
    );
    await t.db.execute("UPDATE llmclient_llmclient SET tls_certificate_issuance_status = 'Requested' WHERE id = ?", [
      ids.llmclientId,
    ]);
    runner.send(nameOf(continueDefaultApiDeployment), { llmclient_id: ids.llmclientId, stage: 'certificate' });
    const runs = await runner.drain();
    expect(runs).toHaveLength(30);
    expect(runs.map((r) => r.error)).toEqual(Array.from({ length: 30 }, () => undefined));
    expect((await llmclient())?.tls).toBe('Failed');
  });

  // smarter/smarter/apps/llmclient/models/llmclient.py: `rfc1034_compliant_name` appends the owner's user name
  // unless the owner is the account's admin (smarter/smarter/apps/account/utils.py, `get_cached_admin_user_for_account`).
  test("a member's LLMClient is deployed at <name>-<username>.<account>.<API domain>: A record, Ingress, Certificate", async () => {
    const member = await addMember(ids.accountId, `jane.doe${ids.accountId}`);
    await t.db.execute('UPDATE llmclient_llmclient SET user_profile_id = ? WHERE id = ?', [
      member.profileId,
      ids.llmclientId,
    ]);
    const memberHost = `support-bot${ids.llmclientId}-janedoe${ids.accountId}.${accountNumber}.${API}`;
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.drain((msg) => {
      if (msg.kwargs.stage === 'certificate' && msg.kwargs.attempt === 1) cloud.issueTls(memberHost, NS);
      if (msg.kwargs.stage === 'domain') cloud.answer(memberHost, 'A', { status: 'found', values: LB });
    });
    expect(cloud.record(apiZoneId(), memberHost, 'A')).toMatchObject({ values: LB });
    expect(cloud.record(apiZoneId(), host, 'A')).toBeUndefined();
    expect(cloud.object('Ingress', memberHost, NS)).toBeDefined();
    expect(cloud.calls).toContain(`kube.get Certificate/${NS}/${memberHost}-tls`);
    expect(await llmclient()).toEqual({ deployed: 1, dns: 'Verified', tls: 'Issued' });
  });

  test('the admin is the first staff profile of the account: a later staff user, and anyone in an account without staff, is a member', async () => {
    const [u] = await t.db.select('SELECT username FROM auth_user WHERE id = ?', [ids.userId]);
    const later = await addMember(ids.accountId, `Ops_Lead${ids.accountId}`);
    await t.db.execute('UPDATE auth_user SET is_staff = 1 WHERE username = ?', [later.username]);
    await t.db.execute('UPDATE llmclient_llmclient SET user_profile_id = ? WHERE id = ?', [
      later.profileId,
      ids.llmclientId,
    ]);
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.runOne(runner.pending.shift()!);
    expect(
      cloud.record(apiZoneId(), `support-bot${ids.llmclientId}-ops-lead${ids.accountId}.${accountNumber}.${API}`, 'A'),
    ).toBeDefined();

    await t.db.execute('UPDATE auth_user SET is_staff = 0 WHERE id = ? OR username = ?', [ids.userId, later.username]);
    await t.db.execute('UPDATE llmclient_llmclient SET user_profile_id = ? WHERE id = ?', [
      ids.profileId,
      ids.llmclientId,
    ]);
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.runOne(runner.pending.pop()!);
    expect(
      cloud.record(apiZoneId(), `support-bot${ids.llmclientId}-${String(u?.username)}.${accountNumber}.${API}`, 'A'),
    ).toBeDefined();
    expect(cloud.record(apiZoneId(), host, 'A')).toBeUndefined();
  });

  test('an API domain whose A record is an alias of its load balancer: the host gets the same alias', async () => {
    const alias = {
      zoneId: 'Z35SXDOTRQ7X7K',
      dnsName: 'lb-1.us-east-1.elb.amazonaws.com',
      evaluateTargetHealth: false,
    };
    cloud.setRecord(apiZoneId(), { name: API, type: 'A', ttl: 0, values: [], alias });
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.runOne(runner.pending.shift()!);
    expect(cloud.record(apiZoneId(), host, 'A')).toMatchObject({ values: [], alias });
  });

  test('with_domain_verification=False: certificate, then Verified without a DNS check, deployed left as it was (as Smarter)', async () => {
    cloud.issueTls(host, NS);
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId, with_domain_verification: false });
    await runner.drain();
    expect(await llmclient()).toEqual({ deployed: 0, dns: 'Verified', tls: 'Issued' });
    expect(cloud.calls.filter((c) => c.startsWith('resolver.lookup'))).toEqual([]);
    expect(cloud.sent).toHaveLength(1);
  });

  test('an LLMClient already deployed and Verified is left alone (the A record is still ensured)', async () => {
    await t.db.execute(
      "UPDATE llmclient_llmclient SET deployed = 1, dns_verification_status = 'Verified' WHERE id = ?",
      [ids.llmclientId],
    );
    runner.send(nameOf(deployDefaultApi), {}, [ids.llmclientId]);
    await runner.drain();
    expect(runner.runs).toHaveLength(1);
    expect(cloud.object('Ingress', host, NS)).toBeUndefined();
    expect(cloud.record(apiZoneId(), host, 'A')).toBeDefined();
  });

  // deploy_default_api.py: "LLMClient %s not found. Nothing to do, returning."
  test('an unknown LLMClient is logged at error and dropped: None, no retry', async () => {
    const logger = recordingLogger();
    runner = new CheckRunner(tasks, { db: t.db, cloud: cloud.deps }, logger);
    runner.send(nameOf(deployDefaultApi), { llmclient_id: 987654321 });
    const [run] = await runner.drain();
    expect([run?.result, run?.error]).toEqual([null, undefined]);
    expect(logger.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      'deploy_default_api() LLMClient 987654321 not found (llmclient_llmclient). Nothing to do, returning.',
    ]);
  });

  // deploy_default_api.py catches every SmarterException of apply_ingress_manifest: TLS Failed, then return.
  test.each([
    ['Forbidden', 'AccessDenied'],
    ['Conflict', 'Conflict'],
    ['unreachable', 'Unavailable'],
  ] as const)(
    'Kubernetes %s on the Ingress: TLS Failed and None, logged; no retry, no continuation, no e-mail',
    async (_word, kind) => {
      cloud.failNext(
        'kube.apply',
        new CloudError(
          'kubernetes',
          'apply',
          `Ingress ${NS}/${host}`,
          kind,
          'ingresses.networking.k8s.io is forbidden',
        ),
      );
      const logger = recordingLogger();
      runner = new CheckRunner(tasks, { db: t.db, cloud: cloud.deps }, logger);
      runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
      const [run] = await runner.drain();
      expect([run?.result, run?.error]).toEqual([null, undefined]);
      expect(runner.runs).toHaveLength(1);
      expect(logger.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
        expect.stringContaining(
          `failed to apply the Ingress of LLMClient Support_Bot${ids.llmclientId} at ${host}: kubernetes apply Ingress ${NS}/${host}: ${kind}`,
        ),
      ]);
      expect((await llmclient())?.tls).toBe('Failed');
      expect(cloud.sent).toEqual([]);
    },
  );

  test("AWS 403 on the A record is a FAILURE naming Route 53's verb and record; throttling is retried", async () => {
    cloud.failNext(
      'route53.upsertRecord',
      new CloudError(
        'route53',
        'upsert record',
        `${host} A`,
        'AccessDenied',
        'not authorized to perform route53:ChangeResourceRecordSets',
      ),
    );
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    const [run] = await runner.drain();
    expect(run?.error?.message).toMatch(/^route53 upsert record .* A: AccessDenied/);
    expect(isPermanent(run!.error!)).toBe(true);
    expect(isPermanent(new CloudError('route53', 'upsert record', 'x', 'Throttled', 'Rate exceeded'))).toBe(false);
  });

  test("the API domain's zone not found is a FAILURE naming the zone", async () => {
    cloud.zones.clear();
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    const [run] = await runner.drain();
    expect(run?.error?.message).toBe(
      `route53 find hosted zone ${API}: NotFound: no hosted zone named ${API} (to copy its A record to ${host})`,
    );
  });

  test('SMTP down: the deployment still completes; the failed e-mail is logged and counted', async () => {
    cloud.issueTls(host, NS);
    cloud.answer(host, 'A', { status: 'found', values: LB });
    cloud.failNext('mailer.send', new CloudError('smtp', 'send', 'mail', 'Unavailable', 'connect ECONNREFUSED'));
    const before = (await mailFailures.get()).values.reduce((n, v) => n + v.value, 0);
    const logger = recordingLogger();
    const { lines } = logger;
    runner = new CheckRunner(tasks, { db: t.db, cloud: cloud.deps }, logger);
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.drain();
    expect(lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      `could not send 'Your Smarter llmclient https://${host}/ has been deployed' to ada${ids.accountId}@example.org: smtp send mail: Unavailable: connect ECONNREFUSED`,
    ]);
    expect(runner.runs.every((r) => r.error === undefined)).toBe(true);
    expect(await llmclient()).toEqual({ deployed: 1, dns: 'Verified', tls: 'Issued' });
    expect(cloud.sent).toHaveLength(0);
    const after = (await mailFailures.get()).values.reduce((n, v) => n + v.value, 0);
    expect(after).toBe(before + 1);
  });
});

describe('own wiring: verify_domain', () => {
  test("PENDING checks again in 300 s with attempt + 1 and the first run's id; VERIFIED with activate deploys the LLMClient", async () => {
    cloud.setRecord(apiZoneId(), { name: host, type: 'A', ttl: 600, values: LB });
    const first = runner.send(nameOf(verifyDomain), {}, [host, 'A', ids.llmclientId, true]);
    await runner.drain((msg) => {
      if (msg.kwargs.attempt === 2) cloud.answer(host, 'A', { status: 'found', values: LB });
    });
    expect(
      runner.runs.map((r) => [
        r.kwargs.attempt ?? 0,
        r.countdown,
        r.result instanceof Object ? 'rescheduled' : r.result,
      ]),
    ).toEqual([
      [0, 0, 'rescheduled'],
      [1, 300, 'rescheduled'],
      [2, 300, true],
    ]);
    expect(runner.runs[2]?.kwargs.task_id).toBe(first);
    expect((await llmclient())?.deployed).toBe(1);
  });

  test("MISSING fails at once: False, and the LLMClient's DNS Failed", async () => {
    runner.send(nameOf(verifyDomain), { domain_name: host, llmclient_id: ids.llmclientId });
    const runs = await runner.drain();
    expect(runs.map((r) => r.result)).toEqual([false]);
    expect((await llmclient())?.dns).toBe('Failed');
  });

  test('a resolver timeout is PENDING, not a failure; 48 checks in all', async () => {
    cloud.setRecord(apiZoneId(), { name: host, type: 'A', ttl: 600, values: LB });
    cloud.answer(host, 'A', new CloudError('dns', 'resolve A', host, 'Unavailable', 'queryA ETIMEOUT'));
    runner.send(nameOf(verifyDomain), { domain_name: host });
    const runs = await runner.drain();
    expect(runs).toHaveLength(48);
    expect(runs.at(-1)?.result).toBe(false);
  });

  // smarter/smarter/apps/llmclient/tasks/verify_domain.py takes any record_type.
  test('an MX record is resolved like any other: PENDING until public DNS answers it', async () => {
    const mx = `mail.${API}`;
    cloud.setRecord(apiZoneId(), { name: mx, type: 'MX', ttl: 600, values: ['10 mx.example.org'] });
    runner.send(nameOf(verifyDomain), { domain_name: mx, record_type: 'mx' });
    const runs = await runner.drain((msg) => {
      if (msg.kwargs.attempt === 1) cloud.answer(mx, 'MX', { status: 'found', values: ['10 mx.example.org'] });
    });
    expect(runs.map((r) => (r.result instanceof Object ? 'again' : r.result))).toEqual(['again', true]);
    expect(cloud.calls.filter((c) => c.startsWith('resolver.lookup'))).toEqual([
      `resolver.lookup ${mx} MX`,
      `resolver.lookup ${mx} MX`,
    ]);
  });

  test("a type node:dns cannot ask for (TLSA) is checked with an A lookup, as Smarter's resolver query", async () => {
    const name = `tlsa.${API}`;
    cloud.setRecord(apiZoneId(), { name, type: 'TLSA', ttl: 600, values: ['3 1 1 0123456789abcdef'] });
    cloud.answer(name, 'A', { status: 'found', values: LB });
    runner.send(nameOf(verifyDomain), { domain_name: name, record_type: 'TLSA' });
    const runs = await runner.drain();
    expect(runs.map((r) => r.result)).toEqual([true]);
    expect(cloud.calls.filter((c) => c.startsWith('resolver.lookup'))).toEqual([`resolver.lookup ${name} A`]);
  });

  test('a malformed domain is a FAILURE naming the argument', async () => {
    runner.send(nameOf(verifyDomain), { domain_name: 'not a domain..' });
    const [run] = await runner.drain();
    expect(run?.error).toMatchObject({
      pyType: 'SmarterValueError',
      message: 'verify_domain domain_name: "not a domain.." is not a valid domain name',
    });
  });
});

describe('own wiring: custom domains', () => {
  const domain = () => `bots${ids.accountId}.example.net`;
  const domainRow = async () =>
    (await t.db.select('SELECT * FROM llmclient_llmclientcustomdomain WHERE domain_name = ?', [domain()]))[0];
  const domainRows = async () =>
    t.db.select('SELECT * FROM llmclient_llmclientcustomdomain WHERE domain_name = ? ORDER BY id', [domain()]);
  /** A CustomDomain row as `smarter apply` leaves it, owned by `profileId`. */
  const insertDomainRow = async (
    profileId: number,
    o: { zoneId?: string; status?: string; verifiedAt?: boolean } = {},
  ) =>
    (
      await t.db.execute(
        `INSERT INTO llmclient_llmclientcustomdomain (aws_hosted_zone_id, domain_name, name, description, version, annotations, user_profile_id,
           verification_status, verified_at, verification_message, created_at, updated_at)
         VALUES (?, ?, ?, '', '1.0.0', '[]', ?, ?, ${o.verifiedAt ? "'2026-01-02 03:04:05.000000'" : 'NULL'}, '', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
        [o.zoneId ?? '', domain(), `d${profileId}`, profileId, o.status ?? 'Not Verified'],
      )
    ).insertId;
  /** An ACM certificate for the domain, as a previous registration left it. */
  const certificate = (status: 'ISSUED' | 'PENDING_VALIDATION') => {
    const cert = {
      arn: `arn:aws:acm:us-east-1:123456789012:certificate/${domain()}`,
      domain: domain(),
      status,
      validationRecords: [],
    };
    cloud.certificates.push(cert);
    return cert;
  };

  // smarter/smarter/apps/llmclient/tasks/register_custom_domain.py, smarter/smarter/apps/infrastructure/services/certificates.py
  test('register_custom_domain: hosted zone, row Verifying with its zone id, certificate and its validation record (TTL 300), then verify_custom_domain', async () => {
    // ACM's own records carry no TTL that Smarter uses: its validation records are written with VALIDATION_RECORD_TTL.
    cloud.certificates.push({
      arn: 'arn:aws:acm:us-east-1:123456789012:certificate/pending',
      domain: domain(),
      status: 'PENDING_VALIDATION',
      validationRecords: [{ name: `_v.${domain()}`, type: 'CNAME', ttl: 0, values: ['_w.acm-validations.aws'] }],
    });
    runner.send(nameOf(registerCustomDomain), {}, [ids.accountId, domain().toUpperCase()]);
    const run = await runner.runOne(runner.pending.shift()!);
    expect(run?.result).toBe(true);
    const zone = [...cloud.zones.values()].find((z) => z.name === domain());
    const row = await domainRow();
    expect(row).toMatchObject({
      aws_hosted_zone_id: zone?.id,
      verification_status: 'Verifying',
      verification_message: 'Verification has started.',
      user_profile_id: String(ids.profileId),
    });
    expect(cloud.record(zone!.id, `_v.${domain()}`, 'CNAME')).toMatchObject({
      ttl: 300,
      values: ['_w.acm-validations.aws'],
    });
    expect(runner.pending).toEqual([
      expect.objectContaining({ name: nameOf(verifyCustomDomain), kwargs: { hosted_zone_id: zone?.id } }),
    ]);
  });

  test('register_custom_domain of a domain a member applied: that row gets the zone; no admin-owned duplicate', async () => {
    const member = await addMember(ids.accountId, `member${ids.accountId}`);
    const id = await insertDomainRow(member.profileId);
    runner.send(nameOf(registerCustomDomain), { account_id: ids.accountId, domain_name: domain() });
    expect((await runner.runOne(runner.pending.shift()!)).result).toBe(true);
    const zone = [...cloud.zones.values()].find((z) => z.name === domain());
    const rows = await domainRows();
    expect(
      rows.map((r) => [Number(r.id), Number(r.user_profile_id), r.aws_hosted_zone_id, r.verification_status]),
    ).toEqual([[id, member.profileId, zone?.id, 'Verifying']]);
  });

  test('register_custom_domain of a Verified domain whose certificate is ISSUED: True, and nothing touched', async () => {
    const zone = cloud.addZone(domain());
    await insertDomainRow(ids.profileId, { zoneId: zone.id, status: 'Verified', verifiedAt: true });
    certificate('ISSUED');
    const before = await domainRow();
    runner.send(nameOf(registerCustomDomain), { account_id: ids.accountId, domain_name: domain() });
    const run = await runner.runOne(runner.pending.shift()!);
    expect(run.result).toBe(true);
    expect(await domainRow()).toEqual(before);
    expect(runner.pending).toEqual([]);
    expect(cloud.calls.filter((c) => !c.startsWith('acm.find'))).toEqual([]);
  });

  test('register_custom_domain of an unverified domain whose certificate is ISSUED: Verifying, verify_custom_domain, nothing else', async () => {
    const zone = cloud.addZone(domain());
    await insertDomainRow(ids.profileId, { zoneId: zone.id, status: 'Failed' });
    certificate('ISSUED');
    runner.send(nameOf(registerCustomDomain), { account_id: ids.accountId, domain_name: domain() });
    expect((await runner.runOne(runner.pending.shift()!)).result).toBe(true);
    expect(await domainRow()).toMatchObject({
      verification_status: 'Verifying',
      verification_message: 'Verification has started.',
      verified_at: null,
    });
    expect(runner.pending).toEqual([
      expect.objectContaining({ name: nameOf(verifyCustomDomain), kwargs: { hosted_zone_id: zone.id } }),
    ]);
    expect(cloud.calls.filter((c) => !c.startsWith('acm.find'))).toEqual([]);
  });

  // smarter/smarter/apps/llmclient/models/llmclient_custom_domain.py, `set_verification_status`.
  test('re-registering a Verified domain whose certificate is not issued: Verifying, and verified_at cleared', async () => {
    const zone = cloud.addZone(domain());
    await insertDomainRow(ids.profileId, { zoneId: zone.id, status: 'Verified', verifiedAt: true });
    certificate('PENDING_VALIDATION');
    runner.send(nameOf(registerCustomDomain), { account_id: ids.accountId, domain_name: domain() });
    expect((await runner.runOne(runner.pending.shift()!)).result).toBe(true);
    expect(await domainRows()).toEqual([
      expect.objectContaining({ aws_hosted_zone_id: zone.id, verification_status: 'Verifying', verified_at: null }),
    ]);
  });

  test('the whole walk: register → verify (NS delegation, then an ISSUED certificate) → deploy_custom_api on the custom host', async () => {
    await t.db.execute('UPDATE llmclient_llmclient SET deployed = 1 WHERE id = ?', [ids.llmclientId]);
    runner.send(nameOf(registerCustomDomain), { account_id: ids.accountId, domain_name: domain() });
    await runner.runOne(runner.pending.shift()!);
    const row = await domainRow();
    await t.db.execute('UPDATE llmclient_llmclient SET custom_domain_id = ? WHERE id = ?', [row?.id, ids.llmclientId]);
    const zone = [...cloud.zones.values()].find((z) => z.name === domain())!;
    const messages: string[] = [];
    await runner.drain(async (msg) => {
      if (msg.name !== nameOf(verifyCustomDomain)) return;
      messages.push(String((await domainRow())?.verification_message));
      if (msg.kwargs.attempt === 1) {
        cloud.answer(domain(), 'NS', { status: 'found', values: [`${zone.nameServers[0]}.`] });
      }
      if (msg.kwargs.attempt === 2) for (const c of cloud.certificates) c.status = 'ISSUED';
    });
    const verify = runner.runsOf(nameOf(verifyCustomDomain));
    expect(verify.map((r) => [r.kwargs.attempt ?? 0, r.countdown])).toEqual([
      [0, 0],
      [1, 1800],
      [2, 1800],
    ]);
    expect(verify[1]?.kwargs).toMatchObject({ sleep_interval: 1800, max_attempts: 48, hosted_zone_id: zone.id });
    expect(messages[1]).toMatch(/NS records .* are not delegated .*awsdns/);
    expect(messages[2]).toMatch(/TLS certificate .* is not issued yet\. Its status is PENDING_VALIDATION\./);
    const done = await domainRow();
    expect(done).toMatchObject({ verification_status: 'Verified', verification_message: '' });
    expect(done?.verified_at).not.toBeNull();
    const custom = `support-bot${ids.llmclientId}.${domain()}`;
    expect(runner.runsOf(nameOf(deployCustomApi)).map((r) => r.result)).toEqual([custom]);
    expect(cloud.record(zone.id, custom, 'A')).toMatchObject({ values: LB });
    expect(cloud.object('Ingress', custom, NS)).toBeDefined();
    // verify_custom_domain.py: AccountContact.send_email_to_account, one message per contact.
    expect(cloud.sent.map((m) => [m.to, m.subject])).toEqual([
      [[`ada${ids.accountId}@example.org`], `Domain Verification for ${domain()} Successful`],
      [[`bob${ids.accountId}@example.org`], `Domain Verification for ${domain()} Successful`],
    ]);
  });

  test('verify_custom_domain out of attempts: Failed with the blocker, and an e-mail to every contact', async () => {
    const zone = cloud.addZone(domain());
    await insertRow(t.db, 'llmclient_llmclientcustomdomain', {
      aws_hosted_zone_id: zone.id,
      domain_name: domain(),
      name: 'd',
      user_profile_id: ids.profileId,
    });
    runner.send(nameOf(verifyCustomDomain), { hosted_zone_id: zone.id, sleep_interval: 60, max_attempts: 3 });
    const runs = await runner.drain();
    expect(runs.map((r) => [r.countdown, r.result instanceof Object ? 'again' : r.result])).toEqual([
      [0, 'again'],
      [60, 'again'],
      [60, false],
    ]);
    expect((await domainRow())?.verification_status).toBe('Failed');
    expect((await domainRow())?.verification_message).toMatch(/not delegated/);
    expect(cloud.sent.map((m) => [m.to, m.subject])).toEqual([
      [[`ada${ids.accountId}@example.org`], `Domain Verification Failure for ${domain()}`],
      [[`bob${ids.accountId}@example.org`], `Domain Verification Failure for ${domain()}`],
    ]);
  });

  test('verify_custom_domain by custom_domain_id of a domain never registered: Failed at once, telling to run smarter deploy', async () => {
    const insertId = await insertRow(t.db, 'llmclient_llmclientcustomdomain', {
      domain_name: domain(),
      name: 'u',
      user_profile_id: ids.profileId,
    });
    runner.send(nameOf(verifyCustomDomain), { custom_domain_id: insertId });
    const [run] = await runner.drain();
    expect(run?.result).toBe(false);
    // smarter/smarter/apps/llmclient/tasks/verify_custom_domain.py
    expect(await domainRow()).toMatchObject({
      verification_status: 'Failed',
      verification_message: `${domain()} has no DNS zone, because it is not registered. Run smarter deploy to register it.`,
      verified_at: null,
    });
  });

  test('a domain registered to another account is refused, naming it', async () => {
    const other = await seed(t.db);
    runner.send(nameOf(registerCustomDomain), { account_id: other.accountId, domain_name: domain() });
    expect((await runner.runOne(runner.pending.shift()!)).result).toBe(true);
    runner.send(nameOf(registerCustomDomain), { account_id: ids.accountId, domain_name: domain() });
    const run = await runner.runOne(runner.pending.pop()!);
    expect(run?.error).toMatchObject({ pyType: 'LLMClientCustomDomainExists' });
    expect(run?.error?.message).toContain(domain());
  });

  test('two domains of one owner with the same snake-case name get numbered names', async () => {
    runner.send(nameOf(registerCustomDomain), {
      account_id: ids.accountId,
      domain_name: `a-b${ids.accountId}.example.net`,
    });
    runner.send(nameOf(registerCustomDomain), {
      account_id: ids.accountId,
      domain_name: `a.b${ids.accountId}.example.net`,
    });
    await runner.runOne(runner.pending.shift()!);
    await runner.runOne(runner.pending.shift()!);
    const names = await t.db.select(
      'SELECT name FROM llmclient_llmclientcustomdomain WHERE user_profile_id = ? ORDER BY id',
      [ids.profileId],
    );
    expect(names.map((r) => r.name)).toEqual([`a_b${ids.accountId}_example_net`, `a_b${ids.accountId}_example_net_1`]);
  });

  test("create_custom_domain_dns_record: the record in the domain's zone and its row; an unknown domain fails", async () => {
    const zone = cloud.addZone(domain());
    const insertId = await insertRow(t.db, 'llmclient_llmclientcustomdomain', {
      aws_hosted_zone_id: zone.id,
      domain_name: domain(),
      name: 'c',
      user_profile_id: ids.profileId,
    });
    runner.send(nameOf(createCustomDomainDnsRecord), {}, [insertId, `_dmarc.${domain()}`, 'txt', '"v=DMARC1; p=none"']);
    runner.send(nameOf(createCustomDomainDnsRecord), {}, [
      insertId,
      `_dmarc.${domain()}`,
      'TXT',
      '"v=DMARC1; p=none"',
      600,
    ]);
    runner.send(nameOf(createCustomDomainDnsRecord), {
      llmclient_custom_domain_id: 99999999,
      record_name: `a.${domain()}`,
      record_type: 'A',
      record_value: '192.0.2.1',
    });
    const runs = await runner.drain();
    expect(runs.map((r) => r.error?.name ?? null)).toEqual([null, null, expect.any(String)]);
    expect(runs[2]?.error).toMatchObject({ pyType: 'LLMClientCustomDomainNotFound' });
    expect(cloud.record(zone.id, `_dmarc.${domain()}`, 'TXT')).toMatchObject({
      values: ['"v=DMARC1; p=none"'],
      ttl: 600,
    });
    expect(cloud.calls.filter((c) => c.startsWith('route53.upsertRecord'))).toHaveLength(1);
    expect(
      await t.db.select(
        'SELECT record_name, record_type, record_value, record_ttl FROM llmclient_llmclientcustomdomaindns WHERE custom_domain_id = ?',
        [insertId],
      ),
    ).toEqual([
      { record_name: `_dmarc.${domain()}`, record_type: 'TXT', record_value: '"v=DMARC1; p=none"', record_ttl: 600 },
    ]);
  });
});

describe('own wiring: custom domain records and hosts', () => {
  const domain = () => `bots${ids.accountId}.example.net`;
  let zoneId: string;
  let domainId: number;
  beforeEach(async () => {
    zoneId = cloud.addZone(domain()).id;
    domainId = (
      await t.db.execute(
        `INSERT INTO llmclient_llmclientcustomdomain (aws_hosted_zone_id, domain_name, name, description, version, annotations, user_profile_id,
           verification_status, verified_at, verification_message, created_at, updated_at)
         VALUES (?, ?, 'c', '', '1.0.0', '[]', ?, 'Verified', UTC_TIMESTAMP(6), '', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
        [zoneId, domain(), ids.profileId],
      )
    ).insertId;
  });
  const dnsRows = async () =>
    t.db.select(
      'SELECT record_name, record_type, record_value, record_ttl FROM llmclient_llmclientcustomdomaindns WHERE custom_domain_id = ? ORDER BY id',
      [domainId],
    );

  // smarter/smarter/apps/llmclient/tasks/create_custom_domain_dns_record.py
  test('create_custom_domain_dns_record takes any Route 53 type: SRV and CAA records and their rows', async () => {
    runner.send(nameOf(createCustomDomainDnsRecord), {}, [
      domainId,
      `_sip._tcp.${domain()}`,
      'srv',
      `10 5 5060 sip.${domain()}`,
      300,
    ]);
    runner.send(nameOf(createCustomDomainDnsRecord), {
      llmclient_custom_domain_id: domainId,
      record_name: `${domain()}.`,
      record_type: 'CAA',
      record_value: '0 issue "amazon.com"',
    });
    const runs = await runner.drain();
    expect(runs.map((r) => r.error)).toEqual([undefined, undefined]);
    expect(cloud.record(zoneId, `_sip._tcp.${domain()}`, 'SRV')).toMatchObject({
      values: [`10 5 5060 sip.${domain()}`],
      ttl: 300,
    });
    expect(cloud.record(zoneId, domain(), 'CAA')).toMatchObject({ values: ['0 issue "amazon.com"'], ttl: 600 });
    expect(await dnsRows()).toEqual([
      {
        record_name: `_sip._tcp.${domain()}`,
        record_type: 'SRV',
        record_value: `10 5 5060 sip.${domain()}`,
        record_ttl: 300,
      },
      { record_name: domain(), record_type: 'CAA', record_value: '0 issue "amazon.com"', record_ttl: 600 },
    ]);
  });

  test('create_custom_domain_dns_record stores the record as Route 53 holds it: an existing record of the same target keeps its TTL', async () => {
    cloud.setRecord(zoneId, { name: `www.${domain()}`, type: 'A', ttl: 3600, values: ['192.0.2.7'] });
    cloud.setRecord(zoneId, { name: `api.${domain()}`, type: 'A', ttl: 60, values: ['192.0.2.8', '192.0.2.9'] });
    runner.send(nameOf(createCustomDomainDnsRecord), {
      llmclient_custom_domain_id: domainId,
      record_name: `www.${domain()}`,
      record_type: 'A',
      record_value: '192.0.2.7',
      record_ttl: 600,
    });
    runner.send(nameOf(createCustomDomainDnsRecord), {
      llmclient_custom_domain_id: domainId,
      record_name: `api.${domain()}`,
      record_type: 'A',
      record_value: '192.0.2.8',
      record_ttl: 600,
    });
    await runner.drain();
    expect(cloud.calls.filter((c) => c.startsWith('route53.upsertRecord'))).toEqual([
      `route53.upsertRecord api.${domain()} A`,
    ]);
    expect(await dnsRows()).toEqual([
      { record_name: `www.${domain()}`, record_type: 'A', record_value: '192.0.2.7', record_ttl: 3600 },
      { record_name: `api.${domain()}`, record_type: 'A', record_value: '192.0.2.8', record_ttl: 600 },
    ]);
  });

  test('create_custom_domain_dns_record refuses a local host, and an unknown type, at once', async () => {
    runner.send(nameOf(createCustomDomainDnsRecord), {
      llmclient_custom_domain_id: domainId,
      record_name: 'localhost',
      record_type: 'A',
      record_value: '127.0.0.1',
    });
    runner.send(nameOf(createCustomDomainDnsRecord), {
      llmclient_custom_domain_id: domainId,
      record_name: `x.${domain()}`,
      record_type: 'WKS',
      record_value: 'x',
    });
    const runs = await runner.drain();
    expect(runs[0]?.error).toMatchObject({
      pyType: 'SmarterValueError',
      message: 'create_custom_domain_dns_record record_name: Domain localhost is prohibited.',
    });
    expect(isPermanent(runs[1]!.error!)).toBe(true);
    expect(cloud.calls.filter((c) => c.startsWith('route53.upsertRecord'))).toEqual([]);
  });

  // smarter/smarter/apps/llmclient/tasks/deploy_custom_api.py honours llmclient_tasks_create_dns_record.
  test('deploy_custom_api with LLM_CLIENT_TASKS_CREATE_DNS_RECORD off: the Ingress of the custom host, no A record', async () => {
    const off = llmclientTasks(
      taskEnv({
        ...alphaSettings(),
        createDnsRecord: false,
      }),
    );
    await t.db.execute('UPDATE llmclient_llmclient SET deployed = 1, custom_domain_id = ? WHERE id = ?', [
      domainId,
      ids.llmclientId,
    ]);
    const custom = `support-bot${ids.llmclientId}.${domain()}`;
    const r = new CheckRunner(off, { db: t.db, cloud: cloud.deps });
    r.send(nameOf(deployCustomApi), { llmclient_id: ids.llmclientId });
    const [run] = await r.drain();
    expect(run?.result).toBe(custom);
    expect(cloud.record(zoneId, custom, 'A')).toBeUndefined();
    expect(cloud.object('Ingress', custom, NS)).toBeDefined();
    runner.send(nameOf(deployCustomApi), { llmclient_id: ids.llmclientId });
    await runner.drain();
    expect(cloud.record(zoneId, custom, 'A')).toMatchObject({ values: LB });
  });

  test("deploy_custom_api of a member's LLMClient: <name>-<username>.<custom domain>", async () => {
    const member = await addMember(ids.accountId, `Kim_Ng${ids.accountId}`);
    await t.db.execute(
      'UPDATE llmclient_llmclient SET deployed = 1, custom_domain_id = ?, user_profile_id = ? WHERE id = ?',
      [domainId, member.profileId, ids.llmclientId],
    );
    runner.send(nameOf(deployCustomApi), { llmclient_id: ids.llmclientId });
    const [run] = await runner.drain();
    const custom = `support-bot${ids.llmclientId}-kim-ng${ids.accountId}.${domain()}`;
    expect(run?.result).toBe(custom);
    expect(cloud.record(zoneId, custom, 'A')).toMatchObject({ values: LB });
  });
});

describe('own wiring: teardown', () => {
  test('delete_default_api (positional, with the deprecated account_id): A record, Ingress, Certificate and Secret gone', async () => {
    cloud.setRecord(apiZoneId(), { name: host, type: 'A', ttl: 600, values: LB });
    cloud.issueTls(host, NS);
    await cloud.deps.kube.apply({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: host, namespace: NS },
    });
    runner.send(nameOf(deleteDefaultApi), {}, [
      `Support_Bot${ids.llmclientId}`,
      `https://${host}/`,
      null,
      ids.accountId,
    ]);
    const [run] = await runner.drain();
    expect(run?.error).toBeUndefined();
    expect(cloud.record(apiZoneId(), host, 'A')).toBeUndefined();
    expect([
      cloud.object('Ingress', host, NS),
      cloud.object('Certificate', `${host}-tls`, NS),
      cloud.object('Secret', `${host}-tls`, NS),
    ]).toEqual([undefined, undefined, undefined]);
  });

  // smarter/smarter/apps/llmclient/tasks/delete_default_api.py checks only the account number of the URL's host.
  test("delete_default_api deletes every host Smarter accepts: a member's, and a name that sanitises differently", async () => {
    const hosts = [`mybot-janedoe.${accountNumber}.${API}`, `a--b.${accountNumber}.${API}`];
    for (const h of hosts) {
      cloud.setRecord(apiZoneId(), { name: h, type: 'A', ttl: 600, values: LB });
      cloud.issueTls(h, NS);
      await cloud.deps.kube.apply({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: h, namespace: NS },
      });
    }
    runner.send(nameOf(deleteDefaultApi), {
      name: 'My Bot',
      api_url: `https://${hosts[0]}/`,
      account_number: accountNumber,
    });
    runner.send(nameOf(deleteDefaultApi), { name: 'a__b', api_url: `https://${hosts[1]}/`, account_id: ids.accountId });
    const runs = await runner.drain();
    expect(runs.map((r) => r.error)).toEqual([undefined, undefined]);
    for (const h of hosts) {
      expect(cloud.record(apiZoneId(), h, 'A')).toBeUndefined();
      expect([
        cloud.object('Ingress', h, NS),
        cloud.object('Certificate', `${h}-tls`, NS),
        cloud.object('Secret', `${h}-tls`, NS),
      ]).toEqual([undefined, undefined, undefined]);
    }
  });

  test('delete_default_api of a URL of another account, or without a valid account number, or without a scheme, deletes nothing', async () => {
    cloud.setRecord(apiZoneId(), { name: host, type: 'A', ttl: 600, values: LB });
    runner.send(nameOf(deleteDefaultApi), { name: 'x', api_url: `https://${host}/`, account_number: '9999-9999-9999' });
    runner.send(nameOf(deleteDefaultApi), { name: 'x', api_url: `https://x.3141-abc.${API}/` });
    runner.send(nameOf(deleteDefaultApi), { name: 'x', api_url: host });
    const runs = await runner.drain();
    expect(runs.map((r) => r.result)).toEqual([null, null, null]);
    expect(cloud.record(apiZoneId(), host, 'A')).toBeDefined();
    expect(cloud.calls).toEqual([]);
  });

  // destroy_domain_A_record.py: a missing zone is "DNS zone not found for %s. Nothing to do, returning."
  test('destroy_domain_A_record: deleted, then already gone is success; an unknown zone is logged and success', async () => {
    cloud.setRecord(apiZoneId(), { name: host, type: 'A', ttl: 600, values: LB });
    runner.send(nameOf(destroyDomainARecord), { hostname: host, api_host_domain: API });
    runner.send(nameOf(destroyDomainARecord), {}, [host, API]);
    runner.send(nameOf(destroyDomainARecord), { hostname: host, api_host_domain: 'nowhere.example.org' });
    const runs = await runner.drain();
    expect(runs.map((r) => r.error?.message ?? r.result)).toEqual([null, null, null]);
  });

  test("undeploy_default_api of a member's LLMClient deletes its <name>-<username> host", async () => {
    const member = await addMember(ids.accountId, `jane.doe${ids.accountId}`);
    await t.db.execute('UPDATE llmclient_llmclient SET user_profile_id = ? WHERE id = ?', [
      member.profileId,
      ids.llmclientId,
    ]);
    const memberHost = `support-bot${ids.llmclientId}-janedoe${ids.accountId}.${accountNumber}.${API}`;
    cloud.setRecord(apiZoneId(), { name: memberHost, type: 'A', ttl: 600, values: LB });
    runner.send(nameOf(undeployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.drain();
    expect(cloud.record(apiZoneId(), memberHost, 'A')).toBeUndefined();
  });

  test('undeploy_default_api: the A record goes; not deployed, Not Verified', async () => {
    await t.db.execute(
      "UPDATE llmclient_llmclient SET deployed = 1, dns_verification_status = 'Verified' WHERE id = ?",
      [ids.llmclientId],
    );
    cloud.setRecord(apiZoneId(), { name: host, type: 'A', ttl: 600, values: LB });
    runner.send(nameOf(undeployDefaultApi), {}, [ids.llmclientId]);
    await runner.drain();
    expect(cloud.record(apiZoneId(), host, 'A')).toBeUndefined();
    expect(await llmclient()).toMatchObject({ deployed: 0, dns: 'Not Verified' });
  });
});

// smarter/smarter/apps/infrastructure/services/certificates.py: `wait_until_issued`, 20 checks 30 s apart; the
// task (smarter/smarter/apps/llmclient/tasks/verify_certificate.py) returns None.
describe('own wiring: verify_certificate (check once and reschedule, not a blocking wait)', () => {
  test('PENDING_VALIDATION checks again every 30 s; ISSUED ends with None; an unknown ARN is a FAILURE naming it', async () => {
    const cert = await cloud.deps.acm.request('cert.example.net');
    runner.send(nameOf(verifyCertificate), {}, [cert.arn]);
    runner.send(nameOf(verifyCertificate), { certificate_arn: 'arn:aws:acm:us-east-1:1:certificate/none' });
    await runner.drain((msg) => {
      if (msg.kwargs.attempt === 2) cert.status = 'ISSUED';
    });
    const mine = runner.runs.filter((r) => r.args[0] === cert.arn || r.kwargs.certificate_arn === cert.arn);
    expect(mine.map((r) => [r.countdown, r.result instanceof Object ? 'again' : r.result])).toEqual([
      [0, 'again'],
      [30, 'again'],
      [30, null],
    ]);
    expect(runner.runs.find((r) => r.error)?.error?.message).toBe(
      'acm describe certificate arn:aws:acm:us-east-1:1:certificate/none: NotFound: no such certificate',
    );
  });

  test('a certificate never issued: 20 checks, then None', async () => {
    const cert = await cloud.deps.acm.request('never.example.net');
    runner.send(nameOf(verifyCertificate), { certificate_arn: cert.arn });
    const runs = await runner.drain();
    expect(runs).toHaveLength(20);
    expect(runs.at(-1)?.result).toBeNull();
  });
});
