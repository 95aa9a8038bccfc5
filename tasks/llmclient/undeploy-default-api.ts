/**
 * `undeploy_default_api(llmclient_id)`: deletes the default host's A record (Route 53, so on the infrastructure
 * queue, as ADR-030 puts every task that calls the cloud; Smarter's last version seen still declared the
 * operational one) and sets the LLMClient not deployed, Not Verified.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { pk } from '../deps.js';
import { type InfraDeps, type InfraEnv } from './env.js';
import { destroyARecord } from './destroy-domain-a-record.js';
import { defaultHost } from './hosts.js';
import { TASK } from './names.js';
import { DNS, getLlmclient, updateLlmclient } from './rows.js';

export const undeployDefaultApi = (env: InfraEnv) =>
  defineTask<{ llmclient_id: number }, null, InfraDeps>({
    name: TASK.undeployDefaultApi,
    queue: env.queue,
    retry: env.retry,
    params: z.strictObject({ llmclient_id: pk() }),
    async run(p, ctx) {
      const { db } = ctx.deps;
      const l = await getLlmclient(db, p.llmclient_id, 'undeploy_default_api');
      await destroyARecord(ctx.deps.cloud, defaultHost(l, env.llmclientApiDomain), env.llmclientApiDomain);
      await updateLlmclient(db, l.id, { deployed: false, dns_verification_status: DNS.NOT_VERIFIED });
      return null;
    },
  });
