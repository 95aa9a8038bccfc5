/** What the provider and MCP tasks add to the shared task options. */
import type { TaskEnv } from '../deps.js';

export interface CredentialEnv extends TaskEnv {
  fernetEncryptionKey: string;
  /**
   * Smarter's `Provider.production_api_key()` reads `<NAME>_API_KEY` from the process environment, a name
   * made from the provider's name, so it cannot be a declared setting; tests pass their own environment.
   */
  environ: (name: string) => string | undefined;
}
