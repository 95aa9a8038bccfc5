/**
 * An OpenAI-compatible embeddings endpoint on loopback: `POST /v1/embeddings` with `Authorization: Bearer`.
 *
 *   const api = await startEmbeddingsStandIn({ apiKey: 'sk-test', dimension: 8 });
 *   // base URL: api.url (ends in /v1)
 *   api.failNext(429);
 *
 * Vectors are deterministic (`vectorOf(text, dimension)`: from the text's SHA-256), so a test can say which vector
 * a chunk must have. Answers as OpenAI's API shapes them: `{object: "list", data: [{object: "embedding", index,
 * embedding}], model, usage}`; errors as `{error: {message, type, param, code}}` with its wording for 401
 * (invalid_api_key), 429 (rate_limit_exceeded), 500 (server_error) and 400 (invalid_request_error).
 */
import { createHash } from 'node:crypto';
import { readBody, replyJson, startStandin } from './http-standin.js';

export interface EmbeddingsCall {
  model: string;
  input: string[];
  dimensions?: number;
  encodingFormat?: string;
  authorization: string;
}

export interface EmbeddingsStandIn {
  /** Base URL, `http://127.0.0.1:PORT/v1`. */
  url: string;
  readonly calls: EmbeddingsCall[];
  /** The next request gets this error (401, 429 or 500, worded as the API words them). */
  failNext(status: 401 | 429 | 500): void;
  stop(): Promise<void>;
}

/** The stand-in's vector of a text: `dimension` numbers in [-1, 1] from its SHA-256. */
export function vectorOf(text: string, dimension: number): number[] {
  const out: number[] = [];
  for (let i = 0; out.length < dimension; i += 1) {
    const h = createHash('sha256').update(`${i}:${text}`).digest();
    for (let j = 0; j + 1 < h.length && out.length < dimension; j += 2) {
      out.push(Math.round(((h.readUInt16BE(j) / 65535) * 2 - 1) * 1e6) / 1e6);
    }
  }
  return out;
}

const ERRORS = {
  401: (key: string) => ({
    message: `Incorrect API key provided: ${key.slice(0, 3)}***${key.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_api_key',
  }),
  429: (model: string) => ({
    message: `Rate limit reached for ${model} in organization org-standin on requests per min (RPM): Limit 3000, Used 3000, Requested 1. Please try again in 20ms.`,
    type: 'requests',
    param: null,
    code: 'rate_limit_exceeded',
  }),
  500: () => ({
    message: 'The server had an error while processing your request. Sorry about that!',
    type: 'server_error',
    param: null,
    code: null,
  }),
};

export async function startEmbeddingsStandIn(options: {
  apiKey: string;
  dimension: number;
}): Promise<EmbeddingsStandIn> {
  const calls: EmbeddingsCall[] = [];
  const faults: (401 | 429 | 500)[] = [];
  const standin = await startStandin(async (req, res) => {
    const text = (await readBody(req)).toString('utf8');
    const send = (status: number, body: unknown) => replyJson(res, status, body);
    const invalid = (message: string) =>
      send(400, { error: { message, type: 'invalid_request_error', param: null, code: null } });
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
      return send(404, {
        error: {
          message: `Invalid URL (${req.method ?? ''} ${req.url ?? ''})`,
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      });
    }
    const authorization = req.headers.authorization ?? '';
    const key = /^Bearer (.+)$/.exec(authorization)?.[1] ?? '';
    let body: { model?: unknown; input?: unknown; dimensions?: unknown; encoding_format?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      return invalid('We could not parse the JSON body of your request.');
    }
    const model = typeof body.model === 'string' ? body.model : '';
    const fault = faults.shift();
    if (fault === 401 || key !== options.apiKey) return send(401, { error: ERRORS[401](key || 'none') });
    if (fault === 429) return send(429, { error: ERRORS[429](model) });
    if (fault === 500) return send(500, { error: ERRORS[500]() });
    if (!model) return invalid('you must provide a model parameter');
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || input.length === 0 || !input.every((x) => typeof x === 'string' && x !== '')) {
      return invalid(
        "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
      );
    }
    const dimension = typeof body.dimensions === 'number' ? body.dimensions : options.dimension;
    calls.push({
      model,
      input: input as string[],
      ...(typeof body.dimensions === 'number' ? { dimensions: body.dimensions } : {}),
      ...(typeof body.encoding_format === 'string' ? { encodingFormat: body.encoding_format } : {}),
      authorization,
    });
    const tokens = (input as string[]).reduce((n, s) => n + Math.ceil(s.length / 4), 0);
    send(200, {
      object: 'list',
      data: (input as string[]).map((text, index) => ({
        object: 'embedding',
        index,
        embedding: vectorOf(text, dimension),
      })),
      model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  });
  return {
    url: `${standin.origin}/v1`,
    calls,
    failNext: (status) => faults.push(status),
    stop: standin.close,
  };
}
