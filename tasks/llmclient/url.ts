/**
 * `LLMClient.url` (`smarter/smarter/apps/llmclient/models/llmclient.py`), which Smarter's deployment e-mail gives:
 * a deployed LLMClient's custom URL when its custom domain is verified, else its default URL; an LLMClient not
 * deployed, its workbench (sandbox) URL. `SmarterValidator.urlify` gives every URL a trailing slash, and the
 * scheme http in the `local` environment, https elsewhere.
 */
import { customHost, defaultHost } from './hosts.js';
import type { LlmclientRow } from './rows.js';
import type { InfrastructureSettings } from '../env/settings.js';

type UrlSettings = Pick<InfrastructureSettings, 'environment' | 'rootDomain'>;

/** `SmarterValidator.urlify(host, environment=…)`. */
function urlify(hostAndPath: string, environment: string): string {
  const url = `${environment === 'local' ? 'http' : 'https'}://${hostAndPath}`;
  return url.endsWith('/') ? url : `${url}/`;
}

/**
 * `smarter_settings.environment_platform_domain`. Smarter's settings seen name `localhost:8000` for `local`; its
 * newest constants move the local port to 9357 (`SMARTER_LOCAL_PORT`), which is used here.
 */
export function environmentPlatformDomain(s: UrlSettings): string {
  if (s.environment === 'prod') return `platform.${s.rootDomain}`;
  if (s.environment === 'local') return 'localhost:9357';
  return `${s.environment}.platform.${s.rootDomain}`;
}

/** `TimestampedModel.hashed_id`: "r", the URL-safe base64 of `id + 1000000` without padding, "x". */
export function hashedId(id: number): string {
  return `r${Buffer.from(String(id + 1_000_000)).toString('base64url')}x`;
}

/**
 * `LLMClient.url`. `deployed` is the LLMClient's state as the task holds it, which Smarter's continuation sets
 * before it mails.
 */
export function llmclientUrl(l: LlmclientRow, deployed: boolean, apiDomain: string, s: UrlSettings): string {
  if (deployed) return urlify(customHost(l) ?? defaultHost(l, apiDomain), s.environment);
  // `prompt:sandbox_by_hashed_id`, under the platform's `workbench/` routes.
  return urlify(`${environmentPlatformDomain(s)}/workbench/llm-clients/${hashedId(l.id)}/`, s.environment);
}
