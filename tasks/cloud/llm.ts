/**
 * The LLM port on Node's `fetch` (the `openai` package for Node needs Node 22). Errors are read from the
 * OpenAI error body (`{"error": {"message", "type", "code"}}`) and typed by status as the package types them.
 */
import type { Logger } from '../../lib/logger.js';
import {
  type ChatRequest,
  type ChatResult,
  LlmError,
  type LlmEndpoint,
  type LlmProviders,
  type Page,
  errorClassOf,
} from './llm-port.js';

export interface LlmOptions {
  timeoutSeconds: number;
}

/** The `openai` package's `base_url + path`: the base always ends in one slash. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

export class FetchLlmProviders implements LlmProviders {
  constructor(
    private readonly options: LlmOptions,
    private readonly log: Logger,
  ) {}

  async chat(ep: LlmEndpoint, req: ChatRequest): Promise<ChatResult> {
    const res = await this.send(ep, 'chat/completions', 'create a chat completion at', json(body(req)));
    const data = (await res.json().catch(() => null)) as {
      choices?: {
        message?: { content?: unknown; tool_calls?: { function?: { name?: unknown; arguments?: unknown } }[] };
      }[];
    } | null;
    const message = data?.choices?.[0]?.message;
    if (!message) {
      throw new LlmError(
        'APIStatusError',
        'create a chat completion at',
        joinUrl(ep.baseUrl, 'chat/completions'),
        res.status,
        'the answer has no choices[0].message',
      );
    }
    return {
      content: typeof message.content === 'string' ? message.content : null,
      toolCalls: (message.tool_calls ?? []).map((c) => ({
        name: text(c.function?.name),
        arguments: text(c.function?.arguments),
      })),
    };
  }

  async chatStreamFirstChunk(ep: LlmEndpoint, req: ChatRequest): Promise<unknown> {
    const res = await this.send(
      ep,
      'chat/completions',
      'stream a chat completion at',
      json({ ...body(req), stream: true }),
    );
    const reader = res.body?.getReader();
    if (!reader) return null;
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return null;
        buffered += decoder.decode(value, { stream: true });
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (!line.startsWith('data:')) continue;
          const data = line.slice(5).trim();
          if (data === '[DONE]') return null;
          return JSON.parse(data) as unknown;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }

  async transcribe(ep: LlmEndpoint, model: string, audio: Buffer, filename: string): Promise<void> {
    const form = new FormData();
    form.append('model', model);
    form.append('file', new Blob([new Uint8Array(audio)], { type: 'audio/wav' }), filename);
    await this.send(ep, 'audio/transcriptions', 'transcribe audio at', { body: form, headers: {} });
  }

  async post(ep: LlmEndpoint, path: string, payload: Record<string, unknown>): Promise<void> {
    const res = await this.send(ep, path, 'post to', json(payload));
    await res.arrayBuffer();
  }

  async getPage(url: string, headers: Record<string, string> = {}): Promise<Page> {
    let res: Response;
    try {
      res = await fetch(url, { headers, signal: AbortSignal.timeout(this.options.timeoutSeconds * 1000) });
    } catch (e) {
      throw transportError('get', url, e);
    }
    return { status: res.status, text: await res.text() };
  }

  private async send(
    ep: LlmEndpoint,
    path: string,
    verb: string,
    init: { body: string | FormData; headers: Record<string, string> },
  ): Promise<Response> {
    const url = joinUrl(ep.baseUrl, path);
    const headers: Record<string, string> = { ...init.headers, Accept: 'application/json' };
    if (ep.apiKey !== null) headers.Authorization = `Bearer ${ep.apiKey}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers,
        body: init.body,
        signal: AbortSignal.timeout(this.options.timeoutSeconds * 1000),
      });
    } catch (e) {
      throw transportError(verb, url, e);
    }
    if (res.ok) return res;
    const text = await res.text().catch(() => '');
    let detail = text.slice(0, 500) || res.statusText;
    try {
      const parsed = JSON.parse(text) as { error?: { message?: unknown; code?: unknown } };
      if (typeof parsed.error?.message === 'string') {
        detail = parsed.error.message + (typeof parsed.error.code === 'string' ? ` (${parsed.error.code})` : '');
      }
    } catch {
      // not JSON: keep the text
    }
    this.log.warn('llm call failed', { url, status: res.status, detail });
    throw new LlmError(errorClassOf(res.status), verb, url, res.status, detail);
  }
}

const text = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));

function body(req: ChatRequest): Record<string, unknown> {
  return {
    model: req.model,
    messages: req.messages,
    max_completion_tokens: req.maxCompletionTokens,
    ...(req.tools ? { tools: req.tools } : {}),
  };
}

function json(payload: unknown) {
  return { body: JSON.stringify(payload), headers: { 'Content-Type': 'application/json' } };
}

function transportError(verb: string, url: string, e: unknown): LlmError {
  const err = e as Error & { cause?: Error & { code?: string } };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') {
    return new LlmError('APITimeoutError', verb, url, null, 'Request timed out.');
  }
  const cause = err?.cause;
  return new LlmError(
    'APIConnectionError',
    verb,
    url,
    null,
    `Connection error: ${cause?.code ?? cause?.message ?? err?.message ?? String(e)}`,
  );
}
