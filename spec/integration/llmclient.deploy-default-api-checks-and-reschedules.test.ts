/**
 * Smarter's LLMClient infrastructure tasks on a real MariaDB with Smarter's tables and in-memory clouds
 * (spec/support/fake-cloud.ts): every task's checks, reschedules, rows and e-mails, walked in-process with the
 * worker's own reschedule planning (spec/support/check-runner.ts). This file: the registry, and deploy_default_api
 * through continue_default_api_deployment.
 */
import { CloudError } from '../../tasks/cloud/errors.js';
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
import { isPermanent } from '../../tasks/env/task-env.js';
import { recordingLogger } from '../support/logs.js';
import { nameOf } from '../support/task-names.js';
import { API, NS, LB, ELEVEN, tasks, t, ids, accountNumber, host, cloud, runner } from '../support/llmclient-infra.js';
import {
  addMember,
  ownLlmclient,
  llmclientInfraForFile,
  logTo,
  llmclient,
  apiZoneId,
} from '../support/llmclient-infra.js';

llmclientInfraForFile();

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
    await ownLlmclient(member.profileId);
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
    await ownLlmclient(later.profileId);
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.runOne(runner.pending.shift()!);
    expect(
      cloud.record(apiZoneId(), `support-bot${ids.llmclientId}-ops-lead${ids.accountId}.${accountNumber}.${API}`, 'A'),
    ).toBeDefined();

    await t.db.execute('UPDATE auth_user SET is_staff = 0 WHERE id = ? OR username = ?', [ids.userId, later.username]);
    await ownLlmclient(ids.profileId);
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
    logTo(logger);
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
      logTo(logger);
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
    logTo(logger);
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
