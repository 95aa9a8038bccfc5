/**
 * The embeddings port over a plain `fetch` of the OpenAI-compatible `POST {baseUrl}/embeddings` (the `openai`
 * SDK needs Node 22). The request is the one LangChain's OpenAIEmbeddings sends for a non-OpenAI provider:
 * `{model, input: [texts], dimensions?}`, plus `encoding_format: "float"` (the Python SDK asks for base64 and
 * decodes it; floats are the same vectors). An error answer keeps the API's own `{error: {message}}` wording.
 */
import type { Logger } from '../../lib/logger.js';
import { cloudCall, isNetworkError } from './call.js';
import type { Embeddings, EmbeddingsEndpoint, EmbeddingsRequest } from './embeddings-port.js';
import { CloudError, type CloudErrorKind } from './errors.js';
import { textOf } from './vectordb.js';

export interface EmbeddingsConfig {
  timeoutSeconds: number;
}

function kindOf(status: number): CloudErrorKind {
  if (status === 401 || status === 403) return 'AccessDenied';
  if (status === 404) return 'NotFound';
  if (status === 429) return 'Throttled';
  if (status >= 500) return 'Unavailable';
  return 'Invalid';
}

function apiMessage(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string };
    const error = parsed.error;
    if (typeof error === 'string') return `HTTP ${status}: ${error}`;
    if (typeof error?.message === 'string') return `HTTP ${status}: ${error.message}`;
  } catch {
    // not JSON: the text itself
  }
  return `HTTP ${status}: ${body.trim().slice(0, 500) || 'no body'}`;
}

function isVectorList(value: unknown, count: number): value is { data: { index: number; embedding: number[] }[] } {
  const data = (value as { data?: unknown } | null)?.data;
  return (
    Array.isArray(data) &&
    data.length === count &&
    data.every((d: unknown) => {
      const item = d as { index?: unknown; embedding?: unknown };
      return (
        typeof item.index === 'number' &&
        Array.isArray(item.embedding) &&
        item.embedding.every((x) => typeof x === 'number')
      );
    })
  );
}

export class HttpEmbeddings implements Embeddings {
  constructor(
    private readonly config: EmbeddingsConfig,
    private readonly log: Logger,
  ) {}

  embed(endpoint: EmbeddingsEndpoint, request: EmbeddingsRequest): Promise<number[][]> {
    const url = `${endpoint.baseUrl.replace(/\/+$/, '')}/embeddings`;
    const resource = `${url} (${request.model})`;
    // fetch's failures before an answer (refused, unresolved, timed out) are a TypeError or a TimeoutError.
    const classify = (err: unknown) => {
      const name = (err as { name?: unknown } | null)?.name;
      const network = isNetworkError(err) || name === 'TypeError' || name === 'TimeoutError';
      return new CloudError(
        'embeddings',
        'create embeddings',
        resource,
        network ? 'Unavailable' : 'Invalid',
        textOf(err),
        { cause: err },
      );
    };
    return cloudCall(this.log, 'embeddings', 'create embeddings', resource, classify, async () => {
      if (!endpoint.apiKey) {
        throw new CloudError('embeddings', 'create embeddings', resource, 'AccessDenied', 'no API key');
      }
      const body: Record<string, unknown> = { model: request.model, input: request.input, encoding_format: 'float' };
      if (request.dimensions !== undefined) body.dimensions = request.dimensions;
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${endpoint.apiKey}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.config.timeoutSeconds * 1000),
      });
      const text = await res.text();
      if (!res.ok) {
        throw new CloudError(
          'embeddings',
          'create embeddings',
          resource,
          kindOf(res.status),
          apiMessage(res.status, text),
        );
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new CloudError(
          'embeddings',
          'create embeddings',
          resource,
          'Invalid',
          `the answer is not JSON: ${text.slice(0, 200)}`,
        );
      }
      if (!isVectorList(parsed, request.input.length)) {
        throw new CloudError(
          'embeddings',
          'create embeddings',
          resource,
          'Invalid',
          `expected data[] of ${request.input.length} embeddings`,
        );
      }
      return [...parsed.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
    });
  }
}
