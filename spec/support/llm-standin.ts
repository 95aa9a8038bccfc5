/**
 * An OpenAI-compatible API on loopback, speaking the subset the verification test bank calls, with OpenAI's
 * shapes and error bodies (`{"error": {"message", "type", "param", "code"}}`):
 *
 *   const llm = await startLlmStandIn({ apiKey: 'sk-test', models: ['gpt-4o'] });
 *   llm.baseUrl                 // http://127.0.0.1:<port>/v1/  (a provider's base_url)
 *   llm.fail(429 | 500 | null)  // every POST answers that, worded as OpenAI words it
 *   llm.reply('Summarize', 'Too long a summary')   // the content of chat answers whose prompt contains a text
 *   llm.requests                // method, path, headers and JSON body (or fields of a multipart form)
 *   llm.pages                   // GET <origin>/<path> serves these HTML pages (website, ToS, docs, privacy)
 *
 * Endpoints: GET /v1/models, POST /v1/chat/completions (JSON, or SSE chunks with `stream`, tool calls when
 * `tools` are given), /v1/audio/transcriptions (multipart), /v1/audio/speech, /v1/images/generations,
 * /v1/fine_tuning/jobs (OpenAI's 400 for an unknown training file).
 */
import type http from 'node:http';
import { readBody, replyJson, startStandin } from './http-standin.js';

export interface LlmRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown> | null;
}

export interface LlmStandIn {
  baseUrl: string;
  origin: string;
  readonly requests: LlmRequest[];
  readonly pages: Map<string, { status: number; html: string }>;
  fail(status: 429 | 500 | 503 | null): void;
  reply(promptContains: string, content: string): void;
  goDown(): Promise<void>;
  stop(): Promise<void>;
}

const ERRORS: Record<number, { message: string; type: string; code: string | null }> = {
  429: {
    message: 'Rate limit reached for requests. Limit: 3 / min. Please try again in 20s.',
    type: 'requests',
    code: 'rate_limit_exceeded',
  },
  500: {
    message: 'The server had an error while processing your request. Sorry about that!',
    type: 'server_error',
    code: null,
  },
  503: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', code: null },
};

export async function startLlmStandIn(opts: { apiKey: string; models: string[] }): Promise<LlmStandIn> {
  const requests: LlmRequest[] = [];
  const pages = new Map<string, { status: number; html: string }>();
  const replies: [string, string][] = [
    ['Translate this to Spanish', '¡Hola!'],
    ['Summarize', 'AI for all'],
  ];
  let failing: number | null = null;

  const error = (
    res: http.ServerResponse,
    status: number,
    message: string,
    type: string,
    code: string | null,
    param: string | null = null,
  ) => replyJson(res, status, { error: { message, type, param, code } });

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const raw = await readBody(req);
    const type = String(req.headers['content-type'] ?? '');
    let body: Record<string, unknown> | null = null;
    if (type.startsWith('application/json') && raw.length > 0) {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    }
    if (type.startsWith('multipart/form-data')) {
      body = Object.fromEntries((await new Response(raw, { headers: { 'content-type': type } }).formData()).entries());
    }
    requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, body });

    const page = pages.get(url.pathname);
    if (req.method === 'GET' && page) {
      res.writeHead(page.status, { 'Content-Type': 'text/html' }).end(page.html);
      return;
    }
    if (!url.pathname.startsWith('/v1/')) {
      return error(res, 404, `Invalid URL (${req.method} ${url.pathname})`, 'invalid_request_error', null);
    }
    const key = /^Bearer (.*)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (key === undefined) {
      return error(
        res,
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        'invalid_request_error',
        null,
      );
    }
    if (key !== opts.apiKey) {
      return error(
        res,
        401,
        `Incorrect API key provided: ${key.slice(0, 3)}***${key.slice(-2)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        'invalid_request_error',
        'invalid_api_key',
      );
    }
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      return replyJson(res, 200, {
        object: 'list',
        data: opts.models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'stand-in' })),
      });
    }
    if (req.method !== 'POST') {
      return error(res, 404, `Invalid URL (${req.method} ${url.pathname})`, 'invalid_request_error', null);
    }
    if (failing !== null) {
      const e = ERRORS[failing] ?? { message: 'error', type: 'server_error', code: null };
      return error(res, failing, e.message, e.type, e.code);
    }
    const model = typeof body?.model === 'string' ? body.model : '';
    const known =
      opts.models.includes(model) || (url.pathname === '/v1/audio/transcriptions' && model === 'gpt-4o-transcribe');
    if (!known) {
      return error(
        res,
        404,
        `The model \`${model}\` does not exist or you do not have access to it.`,
        'invalid_request_error',
        'model_not_found',
      );
    }

    switch (url.pathname) {
      case '/v1/chat/completions': {
        const prompt = JSON.stringify(body?.messages ?? []);
        const content = replies.find(([k]) => prompt.includes(k))?.[1] ?? 'Hello! How can I help?';
        const tools = Array.isArray(body?.tools) && body.tools.length > 0;
        const message = tools
          ? {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Boston"}' } },
              ],
            }
          : { role: 'assistant', content };
        const base = { id: 'chatcmpl-1', created: 1_700_000_000, model };
        if (body?.stream === true) {
          res.writeHead(200, { 'Content-Type': 'text/event-stream' });
          for (const word of content.split(' ')) {
            res.write(
              `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: word }, finish_reason: null }] })}\n\n`,
            );
          }
          res.end('data: [DONE]\n\n');
          return;
        }
        return replyJson(res, 200, {
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message, finish_reason: tools ? 'tool_calls' : 'stop' }],
          usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
        });
      }
      case '/v1/audio/transcriptions':
        if (!(body?.file instanceof Blob)) {
          return error(res, 400, "'file' is a required property", 'invalid_request_error', null, 'file');
        }
        return replyJson(res, 200, { text: '' });
      case '/v1/audio/speech':
        res.writeHead(200, { 'Content-Type': 'audio/mpeg' }).end(Buffer.alloc(64));
        return;
      case '/v1/images/generations':
        return replyJson(res, 200, { created: 1_700_000_000, data: [{ url: 'https://example.com/apple.png' }] });
      case '/v1/fine_tuning/jobs':
        return error(
          res,
          400,
          `invalid training_file: ${String(body?.training_file)}`,
          'invalid_request_error',
          null,
          'training_file',
        );
      default:
        return error(res, 404, `Invalid URL (POST ${url.pathname})`, 'invalid_request_error', null);
    }
  };

  const standin = await startStandin(handle);
  const origin = standin.origin;
  const goDown = standin.close;
  return {
    baseUrl: `${origin}/v1/`,
    origin,
    requests,
    pages,
    fail: (status) => {
      failing = status;
    },
    reply: (k, content) => {
      replies.unshift([k, content]);
    },
    goDown,
    stop: goDown,
  };
}
