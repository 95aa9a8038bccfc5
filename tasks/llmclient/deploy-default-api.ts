/**
 * `deploy_default_api(llmclient_id, with_domain_verification=True)`: the first step of an LLMClient's deployment.
 * It points the LLMClient's default host at the API domain (Route 53 A record), applies its Ingress, and hands
 * off to `continue_default_api_deployment`, which checks the certificate 600 s later. Smarter continues inline
 * when the certificate is already issued; we send the continuation with no countdown instead, so that a check
 * always runs, and reschedules, as the task whose name it carries.
 *
 * As Smarter's (`smarter/smarter/apps/llmclient/tasks/deploy_default_api.py`), it returns None, logging an error,
 * when the LLMClient does not exist, when the DNS service is not ready, and when the Ingress cannot be applied
 * (TLS then Failed; no retry, no e-mail).
 */
import * as z from 'zod';
import { CloudError } from '../cloud/errors.js';
import { pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { infrastructureTask } from '../env/queued-task.js';
import { defaultHost } from './hosts.js';
import { ingressOf } from './ingress.js';
import { llmclientOrDrop } from './llmclient-or-drop.js';
import { DNS, TLS, updateLlmclient } from './rows.js';
import { continueDefaultApiDeployment } from './continue-default-api-deployment.js';
import { copyApiARecord } from './dns.js';

export const CERTIFICATE_FIRST_CHECK_SECONDS = 600;

export const deployDefaultApi = (env: TaskEnv) => {
  // By its definition, not its name: the compiler checks the continuation's keyword arguments.
  const continuation = continueDefaultApiDeployment(env);
  return infrastructureTask<{ llmclient_id: number; with_domain_verification: boolean }, null>(env, {
    name: 'smarter.apps.llmclient.tasks.deploy_default_api.deploy_default_api',
    params: z.strictObject({ llmclient_id: pk(), with_domain_verification: z.boolean().default(true) }),
    async run(p, ctx) {
      const { db, cloud } = ctx.deps;
      const l = await llmclientOrDrop(db, ctx.logger, 'deploy_default_api', p.llmclient_id);
      if (!l) return null;
      if (!(await cloud.readiness.dns())) {
        ctx.logger.error(`deploy_default_api() the DNS service is not ready. Cannot deploy llmclient ${l.name}.`);
        return null;
      }
      const host = defaultHost(l, env.llmclientApiDomain);
      if (env.settings.createDnsRecord) {
        const { created } = await copyApiARecord(cloud, {
          hostname: host,
          apiDomain: env.llmclientApiDomain,
          ttl: env.settings.defaultTtl,
        });
        ctx.logger.info(`${created ? 'created' : 'found'} the A record of ${host}`);
      }
      if (l.deployed && l.dnsStatus === DNS.VERIFIED) {
        ctx.logger.info(`LLMClient ${l.id} is already deployed and verified at ${host}; nothing to do`);
        return null;
      }
      const next = { llmclient_id: l.id, with_domain_verification: p.with_domain_verification, task_id: ctx.id };
      const cont = (stage: 'certificate' | 'domain', countdown: number) =>
        ctx.applyAsync(continuation, [], { ...next, stage }, { countdown });
      if (!env.settings.createIngressManifest) {
        await cont('domain', 0);
        return null;
      }
      try {
        await cloud.kube.apply(ingressOf(env, host));
      } catch (err) {
        // Smarter catches every failure of `apply_ingress_manifest`, a cluster that does not answer included.
        if (!(err instanceof CloudError)) throw err;
        ctx.logger.error(
          `deploy_default_api() failed to apply the Ingress of LLMClient ${l.name} at ${host}: ${err.message}`,
        );
        await updateLlmclient(db, l.id, { tls_certificate_issuance_status: TLS.FAILED });
        return null;
      }
      if (l.tlsStatus !== TLS.ISSUED) {
        await updateLlmclient(db, l.id, { tls_certificate_issuance_status: TLS.REQUESTED });
        await cont('certificate', env.wait(CERTIFICATE_FIRST_CHECK_SECONDS));
      } else {
        await cont('certificate', 0);
      }
      return null;
    },
  });
};
