/**
 * The shipped suite's cases (spec/shipped/smarter-tasks.test.ts) for the llmclient infrastructure names, through
 * moto, the Kubernetes stand-in, DNS and SMTP.
 */
import { waitFor } from './wait.js';
import { API, LOAD_BALANCER, NS } from './shipped-world.js';
import { w, rows, one, ids, accountNumber, newLlmclient } from './shipped-suite.js';
import { type Case, llmclientRow, ingress, mailsTo, issuedCertificate, customDomain } from './shipped-case-helpers.js';

/** A new LLMClient with `set` (an SQL SET list) applied, as an earlier step of Smarter's leaves one. */
async function llmclientWith(set: string) {
  const l = await newLlmclient();
  await w.t.db.execute(`UPDATE llmclient_llmclient SET ${set} WHERE id = ?`, [l.id]);
  return l;
}

/** A custom domain row with its hosted zone in moto, as register_custom_domain leaves one. */
async function zonedDomain(profileId: number, domain: string, status: string) {
  const zone = await w.zone(domain);
  return { zone, id: await customDomain(profileId, domain, { zoneId: zone.id, status }) };
}

/** A custom domain of LLMClient `l`'s owner, named after its account so that no other case's collides. */
async function ownersDomain(l: { id: number; accountId: number }, label: string, status: string) {
  const owner = (await one('SELECT user_profile_id AS p FROM llmclient_llmclient WHERE id = ?', [l.id]))?.p as number;
  const domain = `${label}${l.accountId}.example.net`;
  return { domain, ...(await zonedDomain(owner, domain, status)) };
}

export const LLMCLIENT_CASES: Case[] = [
  // llmclient/tasks/*.py: the infrastructure worker, through moto, the Kubernetes stand-in, DNS and SMTP.
  {
    task: 'llmclient.tasks.deploy_default_api.deploy_default_api',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      return {
        kwargs: { llmclient_id: l.id },
        state: 'SUCCESS',
        // cert-manager issues the certificate of the applied Ingress; public DNS then answers the host.
        meanwhile: async () => {
          await waitFor(async () => (await llmclientRow(l.id))?.tls === 'Requested', 60_000, 200);
          w.kube.issueCertificate({ name: `${l.host}-tls`, namespace: NS });
          w.dns.set(l.host, 'A', LOAD_BALANCER);
        },
        check: async () => {
          await waitFor(async () => (await llmclientRow(l.id))?.dns === 'Verified', 60_000, 200);
          expect(await llmclientRow(l.id)).toEqual({ deployed: 1, dns: 'Verified', tls: 'Issued' });
          expect(await w.record(w.apiZoneId, l.host, 'A')).toEqual(LOAD_BALANCER);
          expect(ingress(l.host)).toBeDefined();
          await waitFor(() => mailsTo(l.contact).length === 1, 20_000, 200);
          expect(mailsTo(l.contact)[0]?.subject).toBe(`Your Smarter llmclient https://${l.host}/ has been deployed`);
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.deploy_default_api.continue_default_api_deployment',
    phase: 1,
    prepare: async () => {
      const l = await llmclientWith("tls_certificate_issuance_status = 'Requested'");
      w.kube.put(
        { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: l.host, namespace: NS } },
        'smarter',
      );
      issuedCertificate(l.host);
      await w.upsertA(w.apiZoneId, l.host);
      w.dns.set(l.host, 'A', LOAD_BALANCER);
      return {
        kwargs: { llmclient_id: l.id, with_domain_verification: true, task_id: null, stage: 'certificate' },
        state: 'SUCCESS',
        check: async () => {
          await waitFor(async () => (await llmclientRow(l.id))?.dns === 'Verified', 60_000, 200);
          expect(await llmclientRow(l.id)).toEqual({ deployed: 1, dns: 'Verified', tls: 'Issued' });
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.verify_domain.verify_domain',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      await w.upsertA(w.apiZoneId, l.host);
      w.dns.set(l.host, 'A', LOAD_BALANCER);
      return {
        kwargs: { domain_name: l.host, record_type: 'A', llmclient_id: l.id, activate_llmclient: true },
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe(true);
          expect((await llmclientRow(l.id))?.deployed).toBe(1);
        },
      };
    },
  },
  {
    // register → Route 53 zone, ACM certificate, row Verifying; its verify_custom_domain finds the delegation.
    task: 'llmclient.tasks.register_custom_domain.register_custom_domain',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      const domain = `bots${l.accountId}.example.net`;
      const zoneOf = async () =>
        String(
          (
            await one('SELECT aws_hosted_zone_id AS z FROM llmclient_llmclientcustomdomain WHERE domain_name = ?', [
              domain,
            ])
          )?.z ?? '',
        );
      return {
        kwargs: { account_id: l.accountId, domain_name: domain },
        state: 'SUCCESS',
        meanwhile: async () => {
          const zoneId = await waitFor(async () => (await zoneOf()) || undefined, 60_000, 200);
          w.dns.set(domain, 'NS', await w.nameServers(zoneId));
        },
        check: async (m) => {
          expect(m.result).toBe(true);
          expect((await zoneOf()).length).toBeGreaterThan(0);
          await waitFor(
            async () =>
              (
                await one(
                  'SELECT verification_status AS s FROM llmclient_llmclientcustomdomain WHERE domain_name = ?',
                  [domain],
                )
              )?.s === 'Verified',
            60_000,
            250,
          );
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.verify_custom_domain.verify_custom_domain',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      const { domain, zone, id } = await ownersDomain(l, 'verify', 'Verifying');
      w.dns.set(domain, 'NS', zone.nameServers);
      return {
        kwargs: { custom_domain_id: id, sleep_interval: 60, max_attempts: 10 },
        state: 'SUCCESS',
        check: async () => {
          await waitFor(
            async () =>
              (await one('SELECT verification_status AS s FROM llmclient_llmclientcustomdomain WHERE id = ?', [id]))
                ?.s === 'Verified',
            60_000,
            250,
          );
          await waitFor(() => mailsTo(l.contact).length >= 1, 20_000, 200);
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.deploy_custom_api.deploy_custom_api',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      const { domain, zone, id } = await ownersDomain(l, 'custom', 'Verified');
      await w.t.db.execute('UPDATE llmclient_llmclient SET deployed = 1, custom_domain_id = ? WHERE id = ?', [
        id,
        l.id,
      ]);
      const host = `bot${l.id}.${domain}`;
      return {
        kwargs: { llmclient_id: l.id },
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe(host);
          expect(await w.record(zone.id, host, 'A')).toEqual(LOAD_BALANCER);
          expect(ingress(host)).toBeDefined();
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.create_custom_domain_dns_record.create_custom_domain_dns_record',
    phase: 1,
    prepare: async () => {
      const domain = `records${ids.accountId}.example.net`;
      const { zone, id } = await zonedDomain(ids.profileId, domain, 'Verified');
      return {
        args: [id, `_dmarc.${domain}`, 'TXT', '"v=DMARC1; p=none"', 600],
        state: 'SUCCESS',
        check: async () => {
          expect(await w.record(zone.id, `_dmarc.${domain}`, 'TXT')).toEqual(['"v=DMARC1; p=none"']);
          expect(
            await rows(
              'SELECT record_name, record_type, record_value, record_ttl FROM llmclient_llmclientcustomdomaindns WHERE custom_domain_id = ?',
              [id],
            ),
          ).toEqual([
            {
              record_name: `_dmarc.${domain}`,
              record_type: 'TXT',
              record_value: '"v=DMARC1; p=none"',
              record_ttl: 600,
            },
          ]);
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.delete_default_api.delete_default_api',
    phase: 1,
    prepare: async () => {
      const l = await newLlmclient();
      await w.upsertA(w.apiZoneId, l.host);
      w.kube.put(
        { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: l.host, namespace: NS } },
        'smarter',
      );
      issuedCertificate(l.host);
      return {
        kwargs: { name: `bot${l.id}`, api_url: `https://${l.host}/`, account_number: l.account },
        state: 'SUCCESS',
        check: async () => {
          expect(await w.record(w.apiZoneId, l.host, 'A')).toBeUndefined();
          expect(ingress(l.host)).toBeUndefined();
          expect(
            w.kube.object({ apiVersion: 'v1', kind: 'Secret', name: `${l.host}-tls`, namespace: NS }),
          ).toBeUndefined();
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.destroy_domain_a_record.destroy_domain_A_record',
    phase: 1,
    prepare: async () => {
      const host = `gone${ids.accountId}.${accountNumber}.${API}`;
      await w.upsertA(w.apiZoneId, host);
      return {
        kwargs: { hostname: host, api_host_domain: API },
        state: 'SUCCESS',
        check: async () => expect(await w.record(w.apiZoneId, host, 'A')).toBeUndefined(),
      };
    },
  },
  {
    task: 'llmclient.tasks.undeploy_default_api.undeploy_default_api',
    phase: 1,
    prepare: async () => {
      const l = await llmclientWith("deployed = 1, dns_verification_status = 'Verified'");
      await w.upsertA(w.apiZoneId, l.host);
      return {
        kwargs: { llmclient_id: l.id },
        state: 'SUCCESS',
        check: async () => {
          expect(await w.record(w.apiZoneId, l.host, 'A')).toBeUndefined();
          expect(await llmclientRow(l.id)).toMatchObject({ deployed: 0, dns: 'Not Verified' });
        },
      };
    },
  },
  {
    task: 'llmclient.tasks.verify_certificate.verify_certificate',
    phase: 1,
    prepare: async () => {
      const arn = await w.requestCertificate(`cert${ids.accountId}.example.net`);
      return { args: [arn], state: 'SUCCESS', check: async (m) => expect(m.result).toBeNull() };
    },
  },
];
