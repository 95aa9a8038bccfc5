/**
 * `undeploy_default_api(llmclient_id)`: deletes the default host's A record (Route 53, so on the infrastructure
 * queue, as ADR-030 puts every task that calls the cloud; Smarter's last version seen still declared the
 * operational one) and sets the LLMClient not deployed, Not Verified. As Smarter's
 * (`smarter/smarter/apps/llmclient/tasks/undeploy_default_api.py`), an LLMClient that does not exist is logged and
 * dropped.
 */
import * as z from 'zod';
import { pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { infrastructureTask } from '../env/queued-task.js';
import { destroyARecord } from './destroy-domain-a-record.js';
import { defaultHost } from './hosts.js';
import { llmclientOrDrop } from './llmclient-or-drop.js';
import { DNS, updateLlmclient } from './rows.js';

export const undeployDefaultApi = (env: TaskEnv) =>
  infrastructureTask<{ llmclient_id: number }, null>(env, {
    name: 'smarter.apps.llmclient.tasks.undeploy_default_api.undeploy_default_api',
    params: z.strictObject({ llmclient_id: pk() }),
    async run(p, ctx) {
      const { db } = ctx.deps;
      const l = await llmclientOrDrop(db, ctx.logger, 'undeploy_default_api', p.llmclient_id, {
        level: 'error',
        then: '',
      });
      if (!l) return null;
      await destroyARecord(ctx.deps.cloud, defaultHost(l, env.llmclientApiDomain), env.llmclientApiDomain, ctx.logger);
      await updateLlmclient(db, l.id, { deployed: false, dns_verification_status: DNS.NOT_VERIFIED });
      return null;
    },
  });
