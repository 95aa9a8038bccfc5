/**
 * `verify_custom_domain(hosted_zone_id=None, sleep_interval=None, max_attempts=None, attempt=0, task_id=None,
 * custom_domain_id=None)` → True/False/None. A custom domain is verified once (1) its public NS records include a
 * name server of its Route 53 zone and (2) its ACM certificate is ISSUED (requested, with its validation records,
 * when it has none). Each run checks once; not yet: Verifying with the blocker as its message, and a check again
 * in `sleep_interval` (default 1800 s) up to `max_attempts` (default 24 h of them). Verified: `verified_at`,
 * `deploy_custom_api` for the deployed LLMClient on the domain, and an e-mail to the account; out of attempts:
 * Failed and an e-mail. As Smarter's (`smarter/smarter/apps/llmclient/tasks/verify_custom_domain.py`), the lookup by
 * `custom_domain_id` comes before `is_taskable()`, which answers False when the cloud is not ready.
 */
import * as z from 'zod';
import type { Rescheduled } from '../../lib/registry/context.js';
import { CloudError } from '../cloud/errors.js';
import { pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { infrastructureTask } from '../env/queued-task.js';
import { isTaskable } from '../cloud/readiness.js';
import { ensureCertificate } from './certificates.js';
import { nsDelegated } from './dns.js';
import { orGaveUp } from './gave-up.js';
import { MAIL, sendToAccount } from './mail.js';
import { DOMAIN, customDomainById, customDomainByZone, deployedLlmclientOn, setDomainStatus } from './rows.js';
import { deployCustomApi } from './deploy-custom-api.js';

export const DEFAULT_SLEEP_INTERVAL = 1800;
const HOURS = 24;

interface Params {
  hosted_zone_id: string | null;
  sleep_interval: number | null;
  max_attempts: number | null;
  attempt: number;
  task_id: string | null;
  custom_domain_id: number | null;
}

export const verifyCustomDomain = (env: TaskEnv) => {
  // Referred to by its definition: the name is the one the task declares.
  const deploy = deployCustomApi(env);
  return infrastructureTask<Params, Rescheduled | boolean>(env, {
    name: 'smarter.apps.llmclient.tasks.verify_custom_domain.verify_custom_domain',
    // Each check passes its own limit (`max_attempts`, or 24 h of `sleep_interval`); 48 is the default's.
    checks: { maxAttempts: 48, firstRunIdParam: 'task_id' },
    argNames: ['hosted_zone_id', 'sleep_interval', 'max_attempts', 'attempt', 'task_id', 'custom_domain_id'],
    params: z.strictObject({
      hosted_zone_id: z.string().nullable().default(null),
      sleep_interval: z.number().positive().nullable().default(null),
      max_attempts: z.number().int().positive().nullable().default(null),
      attempt: z.number().int().nonnegative().default(0),
      task_id: z.string().nullable().default(null),
      custom_domain_id: pk().nullable().default(null),
    }),
    async run(p, ctx) {
      const { db, cloud } = ctx.deps;
      let zoneId = p.hosted_zone_id;
      if (!zoneId) {
        const cd = p.custom_domain_id === null ? null : await customDomainById(db, p.custom_domain_id);
        if (!cd) {
          ctx.logger.error(
            `verify_custom_domain: custom domain ${String(p.custom_domain_id)} not found (llmclient_llmclientcustomdomain)`,
          );
          return false;
        }
        if (!cd.zoneId) {
          const message = `${cd.domainName} has no DNS zone, because it is not registered. Run smarter deploy to register it.`;
          await setDomainStatus(db, cd.id, DOMAIN.FAILED, message);
          ctx.logger.warn(message);
          return false;
        }
        zoneId = cd.zoneId;
      }
      if (!(await isTaskable(cloud.readiness, ctx.logger))) return false;
      const interval = p.sleep_interval ?? DEFAULT_SLEEP_INTERVAL;
      const maxAttempts = p.max_attempts ?? Math.trunc((HOURS * 3600) / interval);
      const zone = await cloud.route53.getZone(zoneId);
      if (!zone) {
        throw new CloudError(
          'route53',
          'get hosted zone',
          zoneId,
          'NotFound',
          "the custom domain's hosted zone does not exist",
        );
      }
      const domain = zone.name;
      const cd = await customDomainByZone(db, zoneId);
      const verified = cd?.status === DOMAIN.VERIFIED;
      if (p.attempt === 0 && cd && !verified) {
        await setDomainStatus(db, cd.id, DOMAIN.VERIFYING, 'Verification has started.');
      }

      let blocker: string | null = null;
      if (!(await nsDelegated(cloud, zone, domain))) {
        blocker = `The NS records of ${domain} are not delegated to Smarter yet. Add these NS records to your root domain's DNS settings: ${zone.nameServers.join(', ')}`;
      } else {
        const cert = await ensureCertificate(cloud, zone.id, domain);
        if (cert.status !== 'ISSUED') {
          blocker = `The TLS certificate of ${domain} is not issued yet. Its status is ${cert.status}.`;
        }
      }

      if (blocker === null) {
        ctx.logger.info(`${domain} is verified: delegated, and its certificate is issued`);
        if (cd) {
          await setDomainStatus(db, cd.id, DOMAIN.VERIFIED, '');
          const llmclientId = await deployedLlmclientOn(db, cd.id);
          if (llmclientId !== null) {
            await ctx.applyAsync(deploy.name, [], { llmclient_id: llmclientId }, { queue: env.infrastructureQueue });
          }
          await sendToAccount(
            db,
            cloud.mailer,
            ctx.logger,
            cd.accountId,
            MAIL.domainVerified(domain, env.settings.customerSupportEmail),
            'domain verified',
          );
        }
        return true;
      }
      ctx.logger.info(`${domain} is not verified yet (check ${p.attempt + 1} of ${maxAttempts}): ${blocker}`);
      if (cd && !verified) await setDomainStatus(db, cd.id, DOMAIN.VERIFYING, blocker);
      const again = await orGaveUp(() =>
        ctx.checkAgain({
          after: env.wait(interval),
          update: { hosted_zone_id: zoneId, sleep_interval: interval, max_attempts: maxAttempts },
          maxAttempts,
        }),
      );
      if (again) return again;
      if (cd) {
        await setDomainStatus(db, cd.id, DOMAIN.FAILED, blocker);
        await sendToAccount(
          db,
          cloud.mailer,
          ctx.logger,
          cd.accountId,
          MAIL.domainFailed(domain, blocker, maxAttempts, env.settings.customerSupportEmail),
          'domain failed',
        );
      }
      return false;
    },
  });
};
