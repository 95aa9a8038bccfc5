/**
 * `register_custom_domain(account_id, domain_name)` → True: the hosted zone of a customer's domain (created when
 * missing), its custom domain row (`aws_hosted_zone_id`, Verifying), its ACM certificate and validation records,
 * then `verify_custom_domain(hosted_zone_id=…)`. A domain another account registered fails with
 * LLMClientCustomDomainExists. Smarter retried that and an unknown account three times; we fail them at once.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { pk } from '../deps.js';
import { DoesNotExist, LLMClientCustomDomainExists } from '../errors.js';
import { ensureCertificate } from './certificates.js';
import { type InfraDeps, type InfraEnv } from './env.js';
import { domainName } from './hosts.js';
import { TASK } from './names.js';
import { DOMAIN, accountById, adminProfileOf, customDomainsByName, setDomainStatus, upsertCustomDomain } from './rows.js';

export const registerCustomDomain = (env: InfraEnv) =>
  defineTask<{ account_id: number; domain_name: string }, boolean, InfraDeps>({
    name: TASK.registerCustomDomain,
    queue: env.queue,
    retry: env.retry,
    params: z.strictObject({ account_id: pk(), domain_name: z.string() }),
    async run(p, ctx) {
      const { db } = ctx.deps;
      const cloud = ctx.deps.cloud;
      const domain = domainName(p.domain_name, 'register_custom_domain domain_name');
      const account = await accountById(db, p.account_id);
      if (!account) throw new DoesNotExist('account.models.Account', `register_custom_domain: Account ${p.account_id} does not exist (account_account)`);
      const profileId = await adminProfileOf(db, account.id);
      if (profileId === null) throw new DoesNotExist('account.models.UserProfile', `register_custom_domain: Account ${account.accountNumber} has no user profile to own ${domain}`);
      const other = (await customDomainsByName(db, domain)).find((d) => d.accountId !== account.id);
      if (other) {
        throw new LLMClientCustomDomainExists(`register_custom_domain: Account ${account.accountNumber} attempted to register ${domain} but it is already registered to another account`);
      }
      const zone = await cloud.route53.getOrCreateZone(domain);
      await cloud.ledger?.zoneCreated(zone);
      const id = await upsertCustomDomain(db, profileId, domain, zone.id);
      await setDomainStatus(db, id, DOMAIN.VERIFYING, `Registered. Delegate ${domain} to these name servers: ${zone.nameServers.join(', ')}`);
      const cert = await ensureCertificate(cloud, zone.id, domain, env.settings.defaultTtl);
      ctx.logger.info(`registered ${domain}: hosted zone ${zone.id}, certificate ${cert.arn} ${cert.status}`);
      await ctx.applyAsync(TASK.verifyCustomDomain, [], { hosted_zone_id: zone.id }, { queue: env.queue });
      return true;
    },
  });
