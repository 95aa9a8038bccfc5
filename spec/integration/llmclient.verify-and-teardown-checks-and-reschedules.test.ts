/**
 * Smarter's LLMClient infrastructure tasks on a real MariaDB with Smarter's tables and in-memory clouds
 * (spec/support/fake-cloud.ts): every task's checks, reschedules, rows and e-mails, walked in-process with the
 * worker's own reschedule planning (spec/support/check-runner.ts). This file: verify_domain, verify_certificate and
 * the teardown tasks.
 */
import { CloudError } from '../../tasks/cloud/errors.js';
import { deleteDefaultApi } from '../../tasks/llmclient/delete-default-api.js';
import { destroyDomainARecord } from '../../tasks/llmclient/destroy-domain-a-record.js';
import { undeployDefaultApi } from '../../tasks/llmclient/undeploy-default-api.js';
import { verifyCertificate } from '../../tasks/llmclient/verify-certificate.js';
import { verifyDomain } from '../../tasks/llmclient/verify-domain.js';
import { nameOf } from '../support/task-names.js';
import { API, NS, LB, t, ids, accountNumber, host, cloud, runner, addMember } from '../support/llmclient-infra.js';
import { ownLlmclient, llmclientInfraForFile, llmclient, apiZoneId } from '../support/llmclient-infra.js';

llmclientInfraForFile();

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

describe('own wiring: teardown', () => {
  test('delete_default_api (positional, with the deprecated account_id): A record, Ingress, Certificate and Secret gone', async () => {
    cloud.setRecord(apiZoneId(), { name: host, type: 'A', ttl: 600, values: LB });
    await cloud.deployHost(host, NS);
    runner.send(nameOf(deleteDefaultApi), {}, [
      `Support_Bot${ids.llmclientId}`,
      `https://${host}/`,
      null,
      ids.accountId,
    ]);
    const [run] = await runner.drain();
    expect(run?.error).toBeUndefined();
    expect(cloud.record(apiZoneId(), host, 'A')).toBeUndefined();
    expect(cloud.hostObjects(host, NS)).toEqual([undefined, undefined, undefined]);
  });

  // smarter/smarter/apps/llmclient/tasks/delete_default_api.py checks only the account number of the URL's host.
  test("delete_default_api deletes every host Smarter accepts: a member's, and a name that sanitises differently", async () => {
    const hosts = [`mybot-janedoe.${accountNumber}.${API}`, `a--b.${accountNumber}.${API}`];
    for (const h of hosts) {
      cloud.setRecord(apiZoneId(), { name: h, type: 'A', ttl: 600, values: LB });
      await cloud.deployHost(h, NS);
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
      expect(cloud.hostObjects(h, NS)).toEqual([undefined, undefined, undefined]);
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
    await ownLlmclient(member.profileId);
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
