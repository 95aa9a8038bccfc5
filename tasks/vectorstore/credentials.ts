/**
 * Where a vectorstore's database and embeddings model are reached, and with which keys, read as Smarter reads
 * them: a managed database from its ApiConnection (`base_url`, and the Secret `api_key`), a self-hosted Qdrant
 * with the Secret Smarter generated for it (`api_key_secret`), the embeddings from the vectorstore's Provider
 * (`base_url`, or OpenAI's; the Secret `api_key`). Secrets are decrypted with `FERNET_ENCRYPTION_KEY` and their
 * `last_accessed` moved, as `Secret.get_secret()` does. An operator's override replaces what the row names.
 */
import type { EmbeddingsEndpoint } from '../cloud/embeddings-port.js';
import { numOrNull, str, strOrNull } from '../db/columns.js';
import type { Queryable } from '../db/database.js';
import { readSecret } from '../secret/rows.js';
import type { VectorstoreOverrides } from '../env/settings.js';
import { SmarterConfigurationError, VectorStoreBackendConnectionError } from './errors.js';
import { type VectorstoreRow, apiConnectionRow, embeddingsProviderRows } from './rows.js';

/** `langchain_openai.OpenAIEmbeddings`' base URL when the Provider has none. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

export interface CredentialDeps {
  db: Queryable;
  fernetEncryptionKey: string;
  overrides: VectorstoreOverrides;
}

const secret = (deps: CredentialDeps, id: number | null): Promise<string | null> =>
  id === null ? Promise.resolve(null) : readSecret(deps.db, deps.fernetEncryptionKey, id, true);

/** The vectorstore's ApiConnection (`connection_apiconnection`, a child table of `connection_connectionbase`). */
async function connectionOf(
  db: Queryable,
  v: VectorstoreRow,
): Promise<{ baseUrl: string; apiKeyId: number | null } | null> {
  if (v.connectionId === null) return null;
  const r = await apiConnectionRow(db, v.connectionId);
  return r
    ? {
        baseUrl: str(r.base_url),
        apiKeyId: numOrNull(r.api_key_id),
      }
    : null;
}

/** `QdrantBackend._url_and_api_key` (backends/qdrant.py); `selfHostedUrl` is the server's in-cluster URL. */
export async function qdrantTarget(
  deps: CredentialDeps,
  v: VectorstoreRow,
  selfHostedUrl: string,
): Promise<{ url: string; apiKey?: string }> {
  const override = deps.overrides.qdrantApiKey;
  if (v.hosting === 'self_hosted') {
    const key = override || (await secret(deps, v.apiKeySecretId));
    return { url: selfHostedUrl, ...(key ? { apiKey: key } : {}) };
  }
  const connection = await connectionOf(deps.db, v);
  if (!connection?.baseUrl) {
    throw new VectorStoreBackendConnectionError(`Vectorstore ${v.name} has no ApiConnection URL.`);
  }
  const key = override || (await secret(deps, connection.apiKeyId));
  return { url: connection.baseUrl, ...(key ? { apiKey: key } : {}) };
}

/** `PineconeBackend.client` (backends/pinecone.py): the key of the vectorstore's ApiConnection. */
export async function pineconeApiKey(deps: CredentialDeps, v: VectorstoreRow): Promise<string> {
  const connection = await connectionOf(deps.db, v);
  const key = connection ? await secret(deps, connection.apiKeyId) : null;
  if (!key) {
    throw new VectorStoreBackendConnectionError(`Vectorstore ${v.name} has no ApiConnection with a Pinecone API key.`);
  }
  return key;
}

/** `get_embeddings` (embeddings.py): the Provider's OpenAI-compatible API and key. */
export async function embeddingsEndpoint(deps: CredentialDeps, v: VectorstoreRow): Promise<EmbeddingsEndpoint> {
  const [provider] =
    v.embeddingsProviderId === null ? [] : await embeddingsProviderRows(deps.db, v.embeddingsProviderId);
  if (!provider || !v.embeddingsModel) {
    throw new SmarterConfigurationError(`Vectorstore ${v.name} has no embeddings provider or model.`);
  }
  const { overrides } = deps;
  const apiKey = overrides.embeddingsApiKey || (await secret(deps, numOrNull(provider.api_key_id)));
  if (!apiKey) throw new SmarterConfigurationError(`Provider ${str(provider.name)} has no API key.`);
  const baseUrl = overrides.embeddingsUrl || strOrNull(provider.base_url) || OPENAI_BASE_URL;
  return { baseUrl, apiKey };
}
