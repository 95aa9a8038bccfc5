/**
 * Settings of the vector database, Pinecone and embeddings adapters. The keys and URLs themselves are each
 * vectorstore's, read as Smarter reads them (its ApiConnection, its generated Secret, its Provider); the three
 * credential settings here are an operator's explicit override of those, empty (not set) by default, and read
 * only under the worker's own names, so a deployment's `OPENAI_API_KEY` never replaces a Provider's key.
 */
import { parsers, type Setting } from '../../lib/config/settings.js';

const setting = <T>(s: Setting<T>): Setting<T> => s;

export const VECTORSTORE_CLOUD_SETTINGS = {
  qdrantApiKey: setting({
    env: ['SMARTER_WORKER_QDRANT_API_KEY'],
    default: '',
    shownDefault: 'none',
    parse: parsers.string,
    secret: true,
    doc: "Override: the API key sent to every Qdrant server as `api-key`, instead of each vectorstore's own (never logged).",
  }),
  qdrantTimeout: setting({
    env: ['SMARTER_WORKER_QDRANT_TIMEOUT'],
    default: 30,
    parse: parsers.seconds,
    doc: "Seconds a Qdrant request may take (Smarter's `TIMEOUT`).",
  }),
  pineconeControllerUrl: setting({
    env: ['SMARTER_WORKER_PINECONE_CONTROLLER_URL'],
    default: '',
    shownDefault: "Pinecone's (`https://api.pinecone.io`)",
    parse: parsers.string,
    doc: "Pinecone's control plane (its client's `controllerHostUrl`); each index's data plane is the host Pinecone names.",
  }),
  pineconeTimeout: setting({
    env: ['SMARTER_WORKER_PINECONE_TIMEOUT'],
    default: 30,
    parse: parsers.seconds,
    doc: 'Seconds a Pinecone request may take.',
  }),
  embeddingsUrl: setting({
    env: ['SMARTER_WORKER_EMBEDDINGS_URL'],
    default: '',
    shownDefault: 'none',
    parse: parsers.string,
    doc: "Override: the OpenAI-compatible embeddings API (`POST {url}/embeddings`) of every vectorstore, instead of its Provider's.",
  }),
  embeddingsApiKey: setting({
    env: ['SMARTER_WORKER_EMBEDDINGS_API_KEY'],
    default: '',
    shownDefault: 'none',
    parse: parsers.string,
    secret: true,
    doc: "Override: the embeddings API's bearer key, instead of each Provider's (never logged).",
  }),
  embeddingsTimeout: setting({
    env: ['SMARTER_WORKER_EMBEDDINGS_TIMEOUT'],
    default: 60,
    parse: parsers.seconds,
    doc: 'Seconds an embeddings request may take.',
  }),
};

export const VECTORSTORE_CLOUD_DEFAULTS = {
  qdrantApiKey: '',
  qdrantTimeout: 30,
  pineconeControllerUrl: '',
  pineconeTimeout: 30,
  embeddingsUrl: '',
  embeddingsApiKey: '',
  embeddingsTimeout: 60,
};
