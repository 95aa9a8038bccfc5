/**
 * `delete_default_api(name, api_url, account_number=None, account_id=None)`: an LLMClient was deleted, so its
 * default host goes: the A record (Smarter calls destroy_domain_A_record synchronously) and the host's Ingress,
 * Certificate and Secret. `account_id` is deprecated but still accepted (tasks queued by earlier versions pass
 * it); the account number comes from the argument, else the account, else the URL's second label. As in Smarter,
 * the URL's host is deleted when its second label is that account number, whatever the rest of it; any other URL
 * is logged and dropped.
 */
import * as z from 'zod';
import { pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { infrastructureTask } from '../env/queued-task.js';
import { destroyARecord } from './destroy-domain-a-record.js';
import { accountNumberOfHost, netlocOf } from './hosts.js';
import { ingressResources } from './ingress.js';
import { accountById } from './rows.js';

export const deleteDefaultApi = (env: TaskEnv) =>
  infrastructureTask<{ name: string; api_url: string; account_number: string | null; account_id: number | null }, null>(
    env,
    {
      name: 'smarter.apps.llmclient.tasks.delete_default_api.delete_default_api',
      params: z.strictObject({
        name: z.string(),
        api_url: z.string(),
        account_number: z.string().nullable().default(null),
        account_id: pk().nullable().default(null),
      }),
      async run(p, ctx) {
        // Smarter's only check: the host's second label is a valid account number, the account's in use.
        const netloc = netlocOf(p.api_url);
        let accountNumber = p.account_number;
        if (accountNumber === null && p.account_id !== null) {
          accountNumber = (await accountById(ctx.deps.db, p.account_id))?.accountNumber ?? null;
          if (accountNumber === null) {
            ctx.logger.warn(
              `delete_default_api: account ${p.account_id} no longer exists; using the account number of ${p.api_url}`,
            );
          }
        }
        accountNumber = accountNumber || accountNumberOfHost(netloc);
        if (!accountNumber || accountNumberOfHost(netloc) !== accountNumber) {
          ctx.logger.error(
            `delete_default_api: ${JSON.stringify(p.api_url)} is not the default API URL of an LLMClient of account ${String(accountNumber)}; nothing deleted`,
          );
          return null;
        }
        const host = netloc.toLowerCase();
        const cloud = ctx.deps.cloud;
        await destroyARecord(cloud, host, env.apiDomain, ctx.logger);
        const refs = ingressResources(host, env.namespace);
        const deleted = await Promise.all([
          cloud.kube.delete(refs.ingress),
          cloud.kube.delete(refs.certificate),
          cloud.kube.delete(refs.secret),
        ]);
        ctx.logger.info(
          `deleted the resources of ${host}: ingress ${deleted[0]}, certificate ${deleted[1]}, secret ${deleted[2]}`,
        );
        return null;
      },
    },
  );
