/**
 * `deploy_custom_api(llmclient_id)` → the custom host, or None: for a deployed LLMClient whose custom domain is
 * verified, the A record `<llmclient>.<custom domain>` in the custom domain's zone (a copy of the API domain's)
 * when LLM_CLIENT_TASKS_CREATE_DNS_RECORD is on, and the Ingress of that host (cert-manager issues its
 * certificate) when LLM_CLIENT_TASKS_CREATE_INGRESS_MANIFEST is. Otherwise nothing to do.
 */
import * as z from 'zod';
import { pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { infrastructureTask } from '../env/queued-task.js';
import { copyApiARecord } from './dns.js';
import { customHost } from './hosts.js';
import { llmclientOrDrop } from './llmclient-or-drop.js';
import { ingressOf } from './ingress.js';

export const deployCustomApi = (env: TaskEnv) =>
  infrastructureTask<{ llmclient_id: number }, string | null>(env, {
    name: 'smarter.apps.llmclient.tasks.deploy_custom_api.deploy_custom_api',
    params: z.strictObject({ llmclient_id: pk() }),
    async run(p, ctx) {
      const { db } = ctx.deps;
      // As Smarter's (`smarter/smarter/apps/llmclient/tasks/deploy_custom_api.py`): a missing LLMClient is dropped.
      const l = await llmclientOrDrop(db, ctx.logger, 'deploy_custom_api', p.llmclient_id, {
        level: 'warn',
        then: ' Nothing to do.',
      });
      if (!l) return null;
      const host = customHost(l);
      if (!host || !l.customDomain?.zoneId || !l.deployed) {
        ctx.logger.warn(
          `LLMClient ${l.id}: not deployed, or its custom domain is missing or not verified; nothing to do`,
        );
        return null;
      }
      const cloud = ctx.deps.cloud;
      if (env.settings.createDnsRecord) {
        await copyApiARecord(cloud, {
          hostname: host,
          apiDomain: env.llmclientApiDomain,
          ttl: env.settings.defaultTtl,
          zoneId: l.customDomain.zoneId,
        });
      }
      if (env.settings.createIngressManifest) {
        await cloud.kube.apply(ingressOf(env, host));
      }
      return host;
    },
  });
