/**
 * `continue_default_api_deployment(llmclient_id, with_domain_verification=True, task_id=None, stage="certificate",
 * attempt=0)`: one check, then `checkAgain`. Stage `certificate`: the Ingress, its cert-manager Certificate
 * (Ready) and its TLS Secret exist; every 60 s, 30 checks in all, then TLS Failed. Stage `domain` (its checks
 * counted from 0 again, as Smarter resets `attempt`): the A record exists and resolves; every 300 s, 48 checks,
 * then DNS Failed. Then deployed, Verified, and the success e-mail to the account's primary contact. As Smarter's
 * (`smarter/smarter/apps/llmclient/tasks/deploy_default_api.py`), an LLMClient that no longer exists is logged and
 * dropped, and a deployment that fails sends no e-mail.
 */
import * as z from 'zod';
import type { Rescheduled } from '../../lib/registry/context.js';
import { CloudError } from '../cloud/errors.js';
import type { KubeRef } from '../cloud/kubernetes-port.js';
import { pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { infrastructureTask } from '../env/queued-task.js';
import { defaultHost } from './hosts.js';
import { certificateReady, ingressResources } from './ingress.js';
import { MAIL, sendToPrimaryContact } from './mail.js';
import { llmclientOrDrop } from './llmclient-or-drop.js';
import { DNS, TLS, updateLlmclient } from './rows.js';
import { llmclientUrl } from './url.js';
import { checkDomain } from './dns.js';
import { orGaveUp } from './gave-up.js';

export const CERTIFICATE_CHECK_INTERVAL = 60;
export const CERTIFICATE_MAX_ATTEMPTS = 30;
export const VERIFY_DOMAIN_INTERVAL = 300;
export const VERIFY_DOMAIN_MAX_ATTEMPTS = 48;

interface Params {
  llmclient_id: number;
  with_domain_verification: boolean;
  task_id: string | null;
  stage: 'certificate' | 'domain';
  attempt: number;
}

export const continueDefaultApiDeployment = (env: TaskEnv) =>
  infrastructureTask<Params, Rescheduled | null>(env, {
    name: 'smarter.apps.llmclient.tasks.deploy_default_api.continue_default_api_deployment',
    checks: { maxAttempts: CERTIFICATE_MAX_ATTEMPTS, firstRunIdParam: 'task_id' },
    params: z.strictObject({
      llmclient_id: pk(),
      with_domain_verification: z.boolean().default(true),
      task_id: z.string().nullable().default(null),
      stage: z.enum(['certificate', 'domain']).default('certificate'),
      attempt: z.number().int().nonnegative().default(0),
    }),
    async run(p, ctx) {
      const { db, cloud } = ctx.deps;
      const l = await llmclientOrDrop(db, ctx.logger, 'continue_default_api_deployment', p.llmclient_id, {
        level: 'error',
        then: ' Nothing to do, returning.',
        meta: { task_id: p.task_id },
      });
      if (!l) return null;
      const host = defaultHost(l, env.llmclientApiDomain);
      let attempt = p.attempt;

      if (p.stage === 'certificate') {
        const refs = ingressResources(host, env.namespace);
        // As Smarter's `get_resource`, any failure to read (an unavailable cluster, a 403) reads as "not there
        // yet": checked again, and after the last check TLS Failed, rather than a FAILURE that leaves it Requested.
        const read = (ref: KubeRef) =>
          cloud.kube.get(ref).catch((err: unknown) => {
            if (err instanceof CloudError) {
              ctx.logger.warn(`could not read ${ref.kind} ${ref.name}: ${err.message}`);
              return null;
            }
            throw err;
          });
        const [ingress, certificate, secret] = await Promise.all([
          read(refs.ingress),
          read(refs.certificate),
          read(refs.secret),
        ]);
        if (!(ingress && secret && certificateReady(certificate))) {
          ctx.logger.info(
            `${host}: ingress ${ingress ? 'found' : 'missing'}, certificate ${certificateReady(certificate) ? 'ready' : 'not ready'}, secret ${secret ? 'found' : 'missing'}; check ${attempt + 1} of ${CERTIFICATE_MAX_ATTEMPTS}`,
            { task_id: p.task_id },
          );
          const again = await orGaveUp(() => ctx.checkAgain({ after: env.wait(CERTIFICATE_CHECK_INTERVAL) }));
          if (again) return again;
          ctx.logger.error(
            `${host}: one or more resources were not created after ${CERTIFICATE_MAX_ATTEMPTS} checks; TLS Failed`,
            { task_id: p.task_id },
          );
          await updateLlmclient(db, l.id, { tls_certificate_issuance_status: TLS.FAILED });
          return null;
        }
        await updateLlmclient(db, l.id, { tls_certificate_issuance_status: TLS.ISSUED });
        attempt = 0;
      }

      if (p.with_domain_verification) {
        if (attempt === 0) await updateLlmclient(db, l.id, { dns_verification_status: DNS.VERIFYING });
        const result = await checkDomain(cloud, { name: host, type: 'A', apiDomain: env.llmclientApiDomain });
        if (result === 'pending') {
          const again = await orGaveUp(() =>
            ctx.checkAgain({
              after: env.wait(VERIFY_DOMAIN_INTERVAL),
              update: { stage: 'domain' },
              attempt,
              maxAttempts: VERIFY_DOMAIN_MAX_ATTEMPTS,
            }),
          );
          if (again) return again;
        }
        if (result !== 'verified') {
          const why =
            result === 'missing'
              ? 'its A record does not exist'
              : `it did not resolve after ${VERIFY_DOMAIN_MAX_ATTEMPTS} checks`;
          ctx.logger.error(`unable to verify domain ${host} (${why}). LLMClient ${l.name} will not be deployed.`, {
            task_id: p.task_id,
          });
          await updateLlmclient(db, l.id, { dns_verification_status: DNS.FAILED });
          return null;
        }
        // Smarter activates the LLMClient only once its domain resolves.
        if (!l.deployed) await updateLlmclient(db, l.id, { deployed: true });
      }
      await updateLlmclient(db, l.id, { dns_verification_status: DNS.VERIFIED });
      ctx.logger.info(`LLMClient ${l.name} has been deployed to ${host}`, { task_id: p.task_id });
      // Smarter's LLMClient is activated just above when its domain was verified; its `url` follows.
      const url = llmclientUrl(l, l.deployed || p.with_domain_verification, env.llmclientApiDomain, env.settings);
      await sendToPrimaryContact(
        db,
        cloud.mailer,
        ctx.logger,
        l.accountId,
        MAIL.deployed(l.name, url, env.settings.customerSupportEmail),
        'deployed',
      );
      return null;
    },
  });
