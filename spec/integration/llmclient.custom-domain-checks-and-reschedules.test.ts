/**
 * Smarter's LLMClient infrastructure tasks on a real MariaDB with Smarter's tables and in-memory clouds
 * (spec/support/fake-cloud.ts): every task's checks, reschedules, rows and e-mails, walked in-process with the
 * worker's own reschedule planning (spec/support/check-runner.ts). This file: custom domains, their records and
 * hosts.
 */
import { llmclientTasks } from '../../tasks/llmclient/index.js';
import { createCustomDomainDnsRecord } from '../../tasks/llmclient/create-custom-domain-dns-record.js';
import { deployCustomApi } from '../../tasks/llmclient/deploy-custom-api.js';
import { registerCustomDomain } from '../../tasks/llmclient/register-custom-domain.js';
import { verifyCustomDomain } from '../../tasks/llmclient/verify-custom-domain.js';
import { isPermanent, taskEnv } from '../../tasks/env/task-env.js';
import { CheckRunner } from '../support/check-runner.js';
import { seed } from '../support/db.js';
import { insertRow } from '../support/django-rows.js';
import { nameOf } from '../support/task-names.js';
import { alphaSettings } from '../support/alpha-settings.js';
import { NS, LB, t, ids, cloud, runner, addMember, llmclientInfraForFile } from '../support/llmclient-infra.js';

llmclientInfraForFile();

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

  /** create_custom_domain_dns_record for this domain, with the keyword arguments Smarter's callers give it. */
  const sendRecord = (record: {
    record_name: string;
    record_type: string;
    record_value: string;
    record_ttl?: number;
  }) => runner.send(nameOf(createCustomDomainDnsRecord), { llmclient_custom_domain_id: domainId, ...record });

  // smarter/smarter/apps/llmclient/tasks/create_custom_domain_dns_record.py
  test('create_custom_domain_dns_record takes any Route 53 type: SRV and CAA records and their rows', async () => {
    runner.send(nameOf(createCustomDomainDnsRecord), {}, [
      domainId,
      `_sip._tcp.${domain()}`,
      'srv',
      `10 5 5060 sip.${domain()}`,
      300,
    ]);
    sendRecord({ record_name: `${domain()}.`, record_type: 'CAA', record_value: '0 issue "amazon.com"' });
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
    sendRecord({ record_name: `www.${domain()}`, record_type: 'A', record_value: '192.0.2.7', record_ttl: 600 });
    sendRecord({ record_name: `api.${domain()}`, record_type: 'A', record_value: '192.0.2.8', record_ttl: 600 });
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
    sendRecord({ record_name: 'localhost', record_type: 'A', record_value: '127.0.0.1' });
    sendRecord({ record_name: `x.${domain()}`, record_type: 'WKS', record_value: 'x' });
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
