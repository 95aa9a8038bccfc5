/**
 * Settings of the vector database and embeddings adapters. Smarter reads a managed database's URL and key from
 * the vectorstore's ApiConnection, a self-hosted one's from its generated Secret, and the embeddings URL and key
 * from its Provider; those Secrets are encrypted with Django's key, so the worker takes the keys as its own
 * secret settings, and the URL of each database from the row's `endpoint_url` (see README "Vectorstore tasks").
 */
import { parsers, type Setting } from '../../lib/config/settings.js';

const setting = <T>(s: Setting<T>): Setting<T> => s;

export const VECTORSTORE_CLOUD_SETTINGS = {
  qdrantApiKey: setting({
    env: ['SMARTER_WORKER_QDRANT_API_KEY', 'QDRANT_API_KEY'],
    default: '',
    shownDefault: 'none',
    parse: parsers.string,
    secret: true,
    doc: 'API key sent to every Qdrant server (self-hosted or Qdrant Cloud) as `api-key` (never logged).',
  }),
  qdrantTimeout: setting({ env: ['SMARTER_WORKER_QDRANT_TIMEOUT'], default: 30, parse: parsers.seconds, doc: 'Seconds a Qdrant request may take (Smarter\'s `TIMEOUT`).' }),
  embeddingsUrl: setting({
    env: ['SMARTER_WORKER_EMBEDDINGS_URL'],
    default: 'https://api.openai.com/v1',
    parse: parsers.string,
    doc: 'Base URL of the OpenAI-compatible embeddings API (`POST {url}/embeddings`).',
  }),
  embeddingsApiKey: setting({
    env: ['SMARTER_WORKER_EMBEDDINGS_API_KEY', 'OPENAI_API_KEY', 'SMARTER_OPENAI_API_KEY'],
    default: '',
    shownDefault: 'none',
    parse: parsers.string,
    secret: true,
    doc: 'Bearer key of the embeddings API (never logged).',
  }),
  embeddingsTimeout: setting({ env: ['SMARTER_WORKER_EMBEDDINGS_TIMEOUT'], default: 60, parse: parsers.seconds, doc: 'Seconds an embeddings request may take.' }),
};

export const VECTORSTORE_CLOUD_DEFAULTS = { qdrantApiKey: '', qdrantTimeout: 30, embeddingsUrl: 'https://api.openai.com/v1', embeddingsApiKey: '', embeddingsTimeout: 60 };
