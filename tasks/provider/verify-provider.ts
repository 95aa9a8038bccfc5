/**
 * `verify_provider(provider_id)`: the provider's test bank (`provider/verification/provider.py`), blackball
 * style, each check recorded in `provider_providerverification`; then status `verified` (and activation) or
 * `failed`. As in Smarter, `can_activate` is tested before the status is set, so only a provider already
 * `verified` can pass. Configuration errors that Smarter lets out of its checks fail the task, and autoretry
 * takes them: no `base_url`, and no `<NAME>_API_KEY` in the worker's environment.
 */
import * as z from 'zod';
import type { LlmProviders } from '../cloud/llm-port.js';
import type { Queryable } from '../db/database.js';
import { pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { recordTask } from '../env/queued-task.js';
import { SmarterValueError } from '../errors.js';
import { PythonException } from '../../lib/errors.js';
import {
  type ProviderRow,
  canActivate,
  loadProvider,
  markProviderFailed,
  markProviderVerified,
  tosAccepted,
} from './rows.js';
import { PROVIDER_VERIFICATIONS, check } from './verifications.js';

export class SmarterConfigurationError extends PythonException {
  constructor(message: string) {
    super('SmarterConfigurationError', 'smarter.common.exceptions', message);
  }
}

const LOGO_EXTENSIONS = ['.png', '.jpg', '.jpeg', '.svg'];

/** Python's `urllib.parse.urljoin` for the cases a connectivity path takes (relative, absolute, empty). */
export function urljoin(base: string, path: string | null): string {
  return path ? new URL(path, base).toString() : base;
}

function productionApiKey(p: ProviderRow, env: TaskEnv): string {
  const name = `${p.name.toUpperCase()}_API_KEY`;
  const key = env.environ(name);
  if (key === undefined) {
    throw new SmarterConfigurationError(
      `Production API key for provider ${p.name} was accessed but is not set in environment variables.`,
    );
  }
  return key;
}

interface Ctx {
  db: Queryable;
  llm: LlmProviders;
  p: ProviderRow;
  env: TaskEnv;
}

const run = (c: Ctx, type: string, fn: () => Promise<{ ok: boolean; error?: string }>) =>
  check(c.db, PROVIDER_VERIFICATIONS, c.p.id, type, fn);
const known = (ok: boolean, error: string) => Promise.resolve(ok ? { ok } : { ok, error });

/** Smarter's `test_web_page`: 200, an HTML document, and `text` in it (case-insensitive); transport errors are a failure. */
async function webPage(c: Ctx, url: string | null, text: string) {
  if (url === null) return { ok: false, error: 'not set' };
  try {
    const page = await c.llm.getPage(url);
    const body = page.text.toLowerCase();
    const ok =
      page.status === 200 &&
      (body.includes('<html') || body.includes('<!doctype html')) &&
      body.includes(text.toLowerCase());
    return ok ? { ok } : { ok, error: `GET ${url}: ${page.status}, not an HTML page containing "${text}"` };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

const BANK: ((c: Ctx) => Promise<boolean>)[] = [
  (c) =>
    run(c, 'api_connectivity', async () => {
      if (!c.p.baseUrl) throw new SmarterValueError('base_url is not set for this provider.');
      const url = urljoin(c.p.baseUrl, c.p.connectivityTestPath);
      // Smarter's `authorization_header` sends the production key from the environment, not the Secret.
      const headers = c.p.apiKeyId !== null ? { Authorization: `Bearer ${productionApiKey(c.p, c.env)}` } : undefined;
      try {
        const page = await c.llm.getPage(url, headers);
        return page.status === 200 ? { ok: true } : { ok: false, error: `GET ${url}: ${page.status}` };
      } catch (e) {
        return { ok: false, error: (e as Error).message };
      }
    }),
  (c) =>
    run(c, 'logo', () =>
      known(
        c.p.logo !== null && LOGO_EXTENSIONS.some((x) => (c.p.logo ?? '').endsWith(x)),
        'no logo, or not png/jpg/jpeg/svg',
      ),
    ),
  (c) =>
    run(c, 'contact_email', () =>
      known(c.p.contactEmail !== null && c.p.contactEmailVerified !== null, 'contact e-mail not set or not verified'),
    ),
  (c) =>
    run(c, 'support_email', () =>
      known(c.p.supportEmail !== null && c.p.supportEmailVerified !== null, 'support e-mail not set or not verified'),
    ),
  (c) => run(c, 'website_url', () => webPage(c, c.p.websiteUrl, '')),
  (c) => run(c, 'tos_url', () => webPage(c, c.p.termsOfServiceUrl, 'Terms of Service')),
  // Smarter names `ProviderVerificationTypes.DOCS_URL`, which its choices lack (an AttributeError there once
  // every earlier check passes); we record the check under "docs_url".
  (c) => run(c, 'docs_url', () => webPage(c, c.p.docsUrl, 'Documentation')),
  (c) => run(c, 'privacy_policy_url', () => webPage(c, c.p.privacyPolicyUrl, 'Privacy Policy')),
  (c) => run(c, 'tos_acceptance', () => known(tosAccepted(c.p), 'terms of service not accepted')),
  (c) => run(c, 'production_api_key', () => known(productionApiKey(c.p, c.env).length > 0, 'empty production API key')),
];

export const verifyProvider = (env: TaskEnv) =>
  recordTask<{ provider_id: number }, null>(env, {
    name: 'smarter.apps.provider.tasks.verify_provider',
    params: z.strictObject({ provider_id: pk() }),
    async run(p, ctx) {
      const { db } = ctx.deps;
      const provider = await loadProvider(db, p.provider_id);
      if (provider === null) {
        ctx.logger.error('verify_provider: provider does not exist', { provider_id: p.provider_id });
        return null;
      }
      const c: Ctx = { db, llm: ctx.deps.cloud.llm, p: provider, env };
      let success = !provider.isDeprecated && !provider.isSuspended && !provider.isFlagged;
      for (const test of BANK) success = success && (await test(c));
      if (!canActivate(provider)) success = false;
      if (success) {
        await markProviderVerified(db, provider.id);
        ctx.logger.info('verify_provider: verified and active', { provider: provider.name });
      } else {
        await markProviderFailed(db, provider.id);
        ctx.logger.error('verify_provider: verification failed', { provider: provider.name });
      }
      return null;
    },
  });
