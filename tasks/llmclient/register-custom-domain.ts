/**
 * `register_custom_domain(account_id, domain_name)` → True. When the account already has a row for the domain
 * (whoever in the account owns it, e.g. a member's `smarter apply`) and the domain's certificate is ISSUED, the
 * domain is registered: only an unverified row with a hosted zone is sent to verification again, and nothing
 * else is touched. Otherwise: the hosted zone (created when missing), the account's row (created, owned by the
 * admin, only when it has none) with the zone's id, the ACM certificate and its validation records, Verifying,
 * then `verify_custom_domain(hosted_zone_id=…)`. A domain another account registered fails with
 * LLMClientCustomDomainExists. Smarter retried that and an unknown account three times; we fail them at once.
 */
import * as z from 'zod';
import { pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { infrastructureTask } from '../env/queued-task.js';
import { DoesNotExist, LLMClientCustomDomainExists } from '../errors.js';
import { ensureCertificate } from './certificates.js';
import { domainName } from './hosts.js';
import {
  DOMAIN,
  accountById,
  accountCustomDomain,
  createCustomDomain,
  otherAccountCustomDomain,
  registrationOwnerProfile,
  setCustomDomainZone,
  setDomainStatus,
} from './rows.js';
import { verifyCustomDomain } from './verify-custom-domain.js';

export const VERIFICATION_STARTED = 'Verification has started.';

export const registerCustomDomain = (env: TaskEnv) => {
  // Referred to by its definition: the name is the one the task declares.
  const verification = verifyCustomDomain(env);
  return infrastructureTask<{ account_id: number; domain_name: string }, boolean>(env, {
    name: 'smarter.apps.llmclient.tasks.register_custom_domain.register_custom_domain',
    params: z.strictObject({ account_id: pk(), domain_name: z.string() }),
    async run(p, ctx) {
      const { db, cloud } = ctx.deps;
      const account = await accountById(db, p.account_id);
      if (!account) {
        throw new DoesNotExist(
          'account.models.Account',
          `register_custom_domain: Account ${p.account_id} does not exist (account_account)`,
        );
      }
      const domain = domainName(p.domain_name, 'register_custom_domain domain_name');
      const verify = (zoneId: string) =>
        ctx.applyAsync(verification.name, [], { hosted_zone_id: zoneId }, { queue: env.infrastructureQueue });

      const existing = await accountCustomDomain(db, account.id, domain);
      if (existing) {
        const issued = (await cloud.acm.find(domain))?.status === 'ISSUED';
        if (issued) {
          if (existing.zoneId && existing.status !== DOMAIN.VERIFIED) {
            await setDomainStatus(db, existing.id, DOMAIN.VERIFYING, VERIFICATION_STARTED);
            await verify(existing.zoneId);
          }
          ctx.logger.info(
            `${domain} is already registered to account ${account.accountNumber} and its certificate is issued; nothing to do`,
          );
          return true;
        }
      }

      const other = await otherAccountCustomDomain(db, account.id, domain);
      if (other) {
        throw new LLMClientCustomDomainExists(
          `register_custom_domain: Account ${account.accountNumber} attempted to register ${domain} but it is already registered to another account`,
        );
      }
      const zone = await cloud.route53.getOrCreateZone(domain);
      await cloud.ledger?.zoneCreated(zone);
      let id: number;
      if (existing) {
        id = existing.id;
        await setCustomDomainZone(db, id, zone.id);
      } else {
        const owner = await registrationOwnerProfile(db, account.id);
        if (owner === null) {
          throw new DoesNotExist(
            'account.models.UserProfile',
            `register_custom_domain: Account ${account.accountNumber} has no user profile to own ${domain}`,
          );
        }
        id = await createCustomDomain(db, owner, domain, zone.id);
      }
      const cert = await ensureCertificate(cloud, zone.id, domain);
      await setDomainStatus(db, id, DOMAIN.VERIFYING, VERIFICATION_STARTED);
      ctx.logger.info(`registered ${domain}: hosted zone ${zone.id}, certificate ${cert.arn} ${cert.status}`);
      await verify(zone.id);
      return true;
    },
  });
};
