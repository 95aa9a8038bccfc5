/**
 * LLM providers through the OpenAI-compatible HTTP API, as the verification test bank calls them
 * (`provider/verification/provider_model.py`: chat completions, streaming, tools, image input, transcription,
 * fine-tuning jobs, image generation, speech) plus the plain GETs of `provider.py` (connectivity, web pages).
 * `baseUrl` is the provider row's `base_url`; paths are joined to it as the `openai` package joins them.
 */
import { PythonException } from '../../lib/errors.js';

export interface LlmEndpoint {
  baseUrl: string;
  /** The provider's API key (its Secret), sent as `Authorization: Bearer`; null sends none. */
  apiKey: string | null;
}

export interface ChatRequest {
  model: string;
  messages: unknown[];
  tools?: unknown[];
  maxCompletionTokens: number;
}

export interface ChatResult {
  content: string | null;
  toolCalls: { name: string; arguments: string }[];
}

export interface Page {
  status: number;
  text: string;
}

export interface LlmProviders {
  chat(ep: LlmEndpoint, req: ChatRequest): Promise<ChatResult>;
  /** Streams a completion and returns the first chunk's parsed JSON, or null when the stream ends empty. */
  chatStreamFirstChunk(ep: LlmEndpoint, req: ChatRequest): Promise<unknown>;
  transcribe(ep: LlmEndpoint, model: string, audio: Buffer, filename: string): Promise<void>;
  /** POST `path` (e.g. `fine_tuning/jobs`, `images/generations`, `audio/speech`) with a JSON body. */
  post(ep: LlmEndpoint, path: string, body: Record<string, unknown>): Promise<void>;
  /** A plain GET of any URL (connectivity test path, website, ToS…): never throws on a status, only on transport. */
  getPage(url: string, headers?: Record<string, string>): Promise<Page>;
}

/** The `openai` package's class for each answer, so a FAILURE names what the Python client would have raised. */
export type LlmErrorClass =
  | 'AuthenticationError'
  | 'PermissionDeniedError'
  | 'NotFoundError'
  | 'BadRequestError'
  | 'UnprocessableEntityError'
  | 'RateLimitError'
  | 'InternalServerError'
  | 'APIStatusError'
  | 'APIConnectionError'
  | 'APITimeoutError';

export function errorClassOf(status: number): LlmErrorClass {
  if (status === 400) return 'BadRequestError';
  if (status === 401) return 'AuthenticationError';
  if (status === 403) return 'PermissionDeniedError';
  if (status === 404) return 'NotFoundError';
  if (status === 422) return 'UnprocessableEntityError';
  if (status === 429) return 'RateLimitError';
  if (status >= 500) return 'InternalServerError';
  return 'APIStatusError';
}

export class LlmError extends PythonException {
  constructor(
    readonly errorClass: LlmErrorClass,
    readonly verb: string,
    readonly url: string,
    readonly status: number | null,
    readonly detail: string,
  ) {
    super(errorClass, 'openai', `LLM ${verb} ${url}: ${status === null ? '' : `${status} `}${detail}`);
  }
}
