/**
 * `delete_default_api(name, api_url, account_number=None, account_id=None)`: an LLMClient was deleted, so its
 * default host goes: the A record (Smarter calls destroy_domain_A_record synchronously) and the host's Ingress,
 * Certificate and Secret. `account_id` is deprecated but still accepted (tasks queued by earlier versions pass
 * it); the account number comes from the argument, else the account, else the URL's second label. A URL that is
 * not `<name>.<account number>.<API domain>` is logged and dropped, as in Smarter.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { pk } from '../deps.js';
import { type InfraDeps, type InfraEnv } from './env.js';
import { destroyARecord } from './destroy-domain-a-record.js';
import { rfc1034Name } from './hosts.js';
import { ingressResources } from './ingress.js';
import { TASK } from './names.js';
import { accountById } from './rows.js';
import { isDomainName } from './settings.js';

function hostOf(url: string): string | null {
  try {
    const h = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `https://${url}`).hostname.toLowerCase();
    return isDomainName(h) ? h : null;
  } catch {
    return null;
  }
}

export const deleteDefaultApi = (env: InfraEnv) =>
  defineTask<{ name: string; api_url: string; account_number: string | null; account_id: number | null }, null, InfraDeps>({
    name: TASK.deleteDefaultApi,
    queue: env.queue,
    retry: env.retry,
    params: z.strictObject({
      name: z.string(),
      api_url: z.string(),
      account_number: z.string().nullable().default(null),
      account_id: pk().nullable().default(null),
    }),
    async run(p, ctx) {
      const host = hostOf(p.api_url);
      const labels = host?.split('.') ?? [];
      const accountNumber =
        p.account_number ?? (p.account_id !== null ? (await accountById(ctx.deps.db, p.account_id))?.accountNumber : undefined) ?? labels[1] ?? null;
      const expected = `.${accountNumber}.${env.apiDomain}`;
      if (!host || !host.endsWith(expected) || !labels[0]?.startsWith(rfc1034Name(p.name)) || labels.length !== expected.split('.').length) {
        ctx.logger.error(`delete_default_api: ${JSON.stringify(p.api_url)} is not the default URL of LLMClient ${JSON.stringify(p.name)} (<name>${expected}); nothing deleted`);
        return null;
      }
      const cloud = ctx.deps.cloud;
      await destroyARecord(cloud, host, env.apiDomain, ctx.logger);
      const refs = ingressResources(host, env.namespace);
      const deleted = await Promise.all([cloud.kube.delete(refs.ingress), cloud.kube.delete(refs.certificate), cloud.kube.delete(refs.secret)]);
      ctx.logger.info(`deleted the resources of ${host}: ingress ${deleted[0]}, certificate ${deleted[1]}, secret ${deleted[2]}`);
      return null;
    },
  });
