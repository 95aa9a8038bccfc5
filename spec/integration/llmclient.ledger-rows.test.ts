/**
 * The ledger of cloud resources (`infrastructure_infrastructureresource`) on a real MariaDB: the rows Smarter's
 * signal receivers write (smarter/smarter/apps/infrastructure/receivers.py, models.py and tests/test_signals.py)
 * and the moments its DNS and certificate services signal them (services/dns.py, services/certificates.py), as
 * register_custom_domain and deploy_default_api reach them here.
 */
import { withLedger } from '../../tasks/cloud/recording-kubernetes.js';
import { InfrastructureLedger, LEDGER_PROVIDER } from '../../tasks/infrastructure/ledger.js';
import { deleteDefaultApi } from '../../tasks/llmclient/delete-default-api.js';
import { llmclientTasks } from '../../tasks/llmclient/index.js';
import { createCustomDomainDnsRecord } from '../../tasks/llmclient/create-custom-domain-dns-record.js';
import { deployDefaultApi } from '../../tasks/llmclient/deploy-default-api.js';
import { destroyDomainARecord } from '../../tasks/llmclient/destroy-domain-a-record.js';
import { registerCustomDomain } from '../../tasks/llmclient/register-custom-domain.js';
import { type SmarterDeps, taskEnv } from '../../tasks/env/task-env.js';
import { CheckRunner } from '../support/check-runner.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';
import { insertRow, ledgerRows } from '../support/django-rows.js';
import { FakeCloud } from '../support/fake-cloud.js';
import { recordingLogger } from '../support/logs.js';
import { nameOf } from '../support/task-names.js';
import { alphaSettings } from '../support/alpha-settings.js';

const env = taskEnv(alphaSettings());
const API = env.llmclientApiDomain;

let t: TestDatabase;
let ids: Awaited<ReturnType<typeof seed>>;
let cloud: FakeCloud;
let ledger: InfrastructureLedger;
let runner: CheckRunner<SmarterDeps>;
const logs = recordingLogger();

beforeAll(async () => {
  t = await createTestDatabase('ledger');
});
afterAll(async () => t.drop());

beforeEach(async () => {
  await t.db.execute('DELETE FROM infrastructure_infrastructureresource');
  ids = await seed(t.db);
  cloud = new FakeCloud();
  const apiZone = cloud.addZone(API);
  cloud.setRecord(apiZone.id, { name: API, type: 'A', ttl: 300, values: ['192.0.2.10'] });
  ledger = new InfrastructureLedger(t.db, logs);
  // As the worker runs it: the Kubernetes port records through the ledger too.
  runner = new CheckRunner(llmclientTasks(env), { db: t.db, cloud: withLedger(cloud.deps, ledger) });
});

const rows = () => ledgerRows(t.db);

describe('own wiring: the moments the DNS and certificate services signal', () => {
  const domain = () => `bots${ids.accountId}.example.net`;

  test('register_custom_domain records its billable hosted zone, its certificate and its validation record, once', async () => {
    runner.send(nameOf(registerCustomDomain), { account_id: ids.accountId, domain_name: domain() });
    expect((await runner.runOne(runner.pending.shift()!))?.result).toBe(true);
    const zone = [...cloud.zones.values()].find((z) => z.name === domain())!;
    const cert = cloud.certificates.find((c) => c.domain === domain())!;
    const validation = cert.validationRecords[0]!;
    const expected = [
      {
        provider: 'aws',
        service: 'dns',
        resource_type: 'dns.zone',
        resource_name: domain(),
        resource_id: zone.id,
        billable: 1,
        status: 'active',
        destroyed_at: null,
      },
      {
        provider: 'aws',
        service: 'certificates',
        resource_type: 'certificate',
        resource_name: domain(),
        resource_id: cert.arn,
        billable: 0,
        status: 'active',
        destroyed_at: null,
      },
      {
        provider: 'aws',
        service: 'dns',
        resource_type: 'dns.record',
        resource_name: `${validation.name.replace(/\.$/, '').toLowerCase()} CNAME`,
        resource_id: zone.id,
        billable: 0,
        status: 'active',
        destroyed_at: null,
      },
    ];
    expect(await rows()).toEqual(expected);

    // Registered again (the zone and certificate exist, the validation record already points there): no new row.
    runner.pending.length = 0;
    runner.send(nameOf(registerCustomDomain), { account_id: ids.accountId, domain_name: domain() });
    await runner.runOne(runner.pending.shift()!);
    expect(await rows()).toEqual(expected);
  });

  test("deploy_default_api records the A record it writes for the LLMClient's host, in the API domain's zone", async () => {
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.runOne(runner.pending.shift()!);
    const apiZone = [...cloud.zones.values()].find((z) => z.name === API)!;
    const records = (await rows()).filter((r) => r.resource_type === 'dns.record');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      provider: LEDGER_PROVIDER,
      service: 'dns',
      resource_id: apiZone.id,
      billable: 0,
      status: 'active',
    });
    const name = String(records[0]?.resource_name);
    expect(name.endsWith(`.${API} A`)).toBe(true);
    expect(cloud.record(apiZone.id, name.slice(0, -' A'.length), 'A')).toMatchObject({ values: ['192.0.2.10'] });
  });

  // smarter/smarter/apps/infrastructure/services/kubernetes.py (delete_resource) via delete_default_api.py.
  test("delete_default_api records the LLMClient's Ingress, Certificate and TLS Secret as destroyed, none billable, whether or not they were there; deploy_default_api's Ingress is not recorded", async () => {
    runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId });
    await runner.runOne(runner.pending.shift()!);
    runner.pending.length = 0;
    expect((await rows()).filter((r) => r.service === 'kubernetes')).toEqual([]);
    // A host whose second label is a valid account number, as delete_default_api requires.
    const host = `bot.1234-5678-9012.${API}`;
    runner.send(nameOf(deleteDefaultApi), { name: 'bot', api_url: `https://${host}/` });
    expect((await runner.runOne(runner.pending.shift()!))?.error).toBeUndefined();
    const kube = (await rows()).filter((r) => r.service === 'kubernetes');
    expect(kube.map((r) => `${r.resource_type} ${r.resource_name} ${r.billable} ${r.status}`).sort()).toEqual([
      `kubernetes.certificate ${host}-tls 0 destroyed`,
      `kubernetes.ingress ${host} 0 destroyed`,
      `kubernetes.secret ${host}-tls 0 destroyed`,
    ]);
  });

  // smarter/smarter/apps/infrastructure/services/dns.py (delete_record) via destroy_domain_a_record.py.
  test('destroy_domain_A_record records the A record it deletes as destroyed; one already gone records nothing', async () => {
    const apiZone = [...cloud.zones.values()].find((z) => z.name === API)!;
    const host = `gone${ids.accountId}.${API}`;
    cloud.setRecord(apiZone.id, { name: host, type: 'A', ttl: 300, values: ['192.0.2.10'] });
    await ledger.recordCreated(apiZone.id, host, 'A');
    runner.send(nameOf(destroyDomainARecord), { hostname: host, api_host_domain: API });
    await runner.runOne(runner.pending.shift()!);
    expect((await rows()).map((r) => [r.resource_name, r.status])).toEqual([[`${host} A`, 'destroyed']]);
    runner.send(nameOf(destroyDomainARecord), { hostname: host, api_host_domain: API });
    await runner.runOne(runner.pending.shift()!);
    expect(await rows()).toHaveLength(1);
  });

  // smarter/smarter/apps/infrastructure/services/dns.py (get_or_create_record) via create_custom_domain_dns_record.py.
  test('create_custom_domain_dns_record records the record it creates, named "<name> <TYPE>" in the domain\'s zone', async () => {
    const zone = cloud.addZone(domain());
    const [r] = await t.db.select('SELECT id FROM account_userprofile WHERE account_id = ? ORDER BY id LIMIT 1', [
      ids.accountId,
    ]);
    const cd = await insertRow(t.db, 'llmclient_llmclientcustomdomain', {
      user_profile_id: Number(r?.id),
      domain_name: domain(),
      aws_hosted_zone_id: zone.id,
      verification_status: 'Verified',
      verification_message: '',
    });
    runner.send(nameOf(createCustomDomainDnsRecord), {
      llmclient_custom_domain_id: cd,
      record_name: `_sip._tcp.${domain()}`,
      record_type: 'SRV',
      record_value: '10 5 5060 sip.example.net',
      record_ttl: 600,
    });
    const run = await runner.runOne(runner.pending.shift()!);
    expect(run?.error).toBeUndefined();
    expect((await rows()).map((x) => [x.resource_type, x.resource_name, x.resource_id, x.status])).toEqual([
      ['dns.record', `_sip._tcp.${domain()} SRV`, zone.id, 'active'],
    ]);
  });
});

describe("own wiring: the receivers' rows (InfrastructureResource.record_created / record_destroyed)", () => {
  const zone = { id: 'Z1LEDGER', name: 'Ledger.Example.com.' };

  test('created, created again (one row), destroyed, re-created (a new row)', async () => {
    await ledger.zoneCreated(zone);
    await ledger.zoneCreated(zone);
    expect(await rows()).toEqual([
      {
        provider: 'aws',
        service: 'dns',
        resource_type: 'dns.zone',
        resource_name: 'ledger.example.com',
        resource_id: 'Z1LEDGER',
        billable: 1,
        status: 'active',
        destroyed_at: null,
      },
    ]);
    await ledger.zoneDestroyed(zone);
    const [destroyed] = await rows();
    expect(destroyed).toMatchObject({ status: 'destroyed' });
    expect(destroyed?.destroyed_at).not.toBeNull();
    await ledger.zoneCreated({ ...zone, id: 'Z2LEDGER' });
    expect((await rows()).map((r) => [r.resource_id, r.status])).toEqual([
      ['Z1LEDGER', 'destroyed'],
      ['Z2LEDGER', 'active'],
    ]);
  });

  test("a resource the ledger does not know is recorded destroyed; no id is stored as '', as Smarter's model stores it", async () => {
    await ledger.destroyed({
      service: 'dns',
      type: 'dns.record',
      name: 'old.ledger.example.com A',
      id: null,
      billable: false,
    });
    expect(await rows()).toEqual([
      expect.objectContaining({
        resource_type: 'dns.record',
        resource_name: 'old.ledger.example.com A',
        resource_id: '',
        billable: 0,
        status: 'destroyed',
      }),
    ]);
    expect((await rows())[0]?.destroyed_at).not.toBeNull();
  });

  test('a record is named "<name> <TYPE>" with its zone\'s id; a certificate by its domain with its ARN', async () => {
    await ledger.recordCreated('Z9', 'WWW.Ledger.Example.com.', 'cname');
    await ledger.certificateCreated({
      arn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc',
      domain: 'ledger.example.com',
    });
    await ledger.recordDestroyed('Z9', 'www.ledger.example.com', 'CNAME');
    expect((await rows()).map((r) => [r.service, r.resource_type, r.resource_name, r.resource_id, r.status])).toEqual([
      ['dns', 'dns.record', 'www.ledger.example.com CNAME', 'Z9', 'destroyed'],
      [
        'certificates',
        'certificate',
        'ledger.example.com',
        'arn:aws:acm:us-east-1:123456789012:certificate/abc',
        'active',
      ],
    ]);
  });

  test("the Kubernetes service's rows (services/kubernetes.py): billable kinds applied, any kind deleted, by name", async () => {
    const pvc = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'model-cache' } };
    await ledger.kubernetesApplied([
      pvc,
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'lb' }, spec: { type: 'LoadBalancer' } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'internal' }, spec: { type: 'ClusterIP' } },
      { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' }, spec: { volumeClaimTemplates: [{}] } },
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'engine' } },
    ]);
    await ledger.kubernetesDeleted('PersistentVolumeClaim', 'model-cache');
    await ledger.kubernetesDeleted('Ingress', 'bot.example.com');
    expect(
      (await rows()).map((r) => [r.service, r.resource_type, r.resource_name, r.resource_id, r.billable, r.status]),
    ).toEqual([
      ['kubernetes', 'kubernetes.persistentvolumeclaim', 'model-cache', 'model-cache', 1, 'destroyed'],
      ['kubernetes', 'kubernetes.service', 'lb', 'lb', 1, 'active'],
      ['kubernetes', 'kubernetes.statefulset', 'db', 'db', 1, 'active'],
      ['kubernetes', 'kubernetes.ingress', 'bot.example.com', 'bot.example.com', 0, 'destroyed'],
    ]);
  });

  test('a ledger that cannot be written is logged and never fails the operation', async () => {
    const failing = new InfrastructureLedger(
      {
        select: () => Promise.reject(new Error('database down')),
        execute: () => Promise.reject(new Error('database down')),
      },
      logs,
    );
    logs.lines.length = 0;
    await expect(failing.zoneCreated(zone)).resolves.toBeUndefined();
    await expect(failing.zoneDestroyed(zone)).resolves.toBeUndefined();
    expect(logs.lines.filter((l) => l.level === 'error').map((l) => l.meta.error)).toEqual([
      'Error: database down',
      'Error: database down',
    ]);
  });
});
