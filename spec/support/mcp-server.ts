/**
 * A real MCP server on loopback, built with `@modelcontextprotocol/sdk` (McpServer), reachable over Streamable
 * HTTP (`/mcp`, stateless: a fresh server per request, so tool changes show on the next connection) and the
 * legacy SSE transport (`GET /sse`, `POST /messages`):
 *
 *   const mcp = await startMcpServer({ name: 'weather', tools: ['forecast', 'alerts'] });
 *   mcp.url / mcp.sseUrl
 *   mcp.setTools(['forecast']);             // what tools/list answers next time
 *   mcp.requireHeader('authorization', 'Bearer s3cret');   // else HTTP 401
 *   mcp.fail('http500' | 'rpc-error' | 'hang' | null);     // how the next requests fail
 *   mcp.requests                            // the headers of each HTTP request
 *   await mcp.goDown();                     // stops listening: connections are refused
 */
import type http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { readJson, startStandin } from './http-standin.js';

export type McpFailure = 'http500' | 'rpc-error' | 'hang' | null;

export interface McpStandIn {
  url: string;
  sseUrl: string;
  port: number;
  readonly requests: { method: string; path: string; headers: http.IncomingHttpHeaders }[];
  setTools(names: string[]): void;
  requireHeader(name: string, value: string | null): void;
  fail(mode: McpFailure): void;
  /** tools/list answers this many tools a page (with nextCursor), instead of all at once. */
  pageSize(n: number | null): void;
  goDown(): Promise<void>;
  stop(): Promise<void>;
}

export interface McpServerOptions {
  name?: string;
  version?: string;
  instructions?: string;
  tools?: string[];
}

export async function startMcpServer(opts: McpServerOptions = {}): Promise<McpStandIn> {
  let tools = opts.tools ?? ['echo'];
  let required: [string, string] | null = null;
  let failure: McpFailure = null;
  let page: number | null = null;
  const requests: McpStandIn['requests'] = [];
  const sse = new Map<string, SSEServerTransport>();

  const build = () => {
    const server = new McpServer(
      { name: opts.name ?? 'stand-in', version: opts.version ?? '1.2.3' },
      { instructions: opts.instructions ?? 'Use the tools.', capabilities: { tools: {} } },
    );
    for (const name of tools) {
      server.registerTool(
        name,
        {
          title: `The ${name} tool`,
          description: `Does ${name}.`,
          inputSchema: { text: z.string() },
          annotations: { readOnlyHint: true },
        },
        ({ text }) => ({
          content: [{ type: 'text', text: `${name}: ${text}` }],
        }),
      );
    }
    // Paging and JSON-RPC errors in tools/list, which McpServer's own handler never produces.
    server.server.setRequestHandler(ListToolsRequestSchema, (req) => {
      if (failure === 'rpc-error') throw new McpError(ErrorCode.InternalError, 'the tool registry is unavailable');
      const all = tools.map((name) => ({
        name,
        title: `The ${name} tool`,
        description: `Does ${name}.`,
        inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } } },
        annotations: { readOnlyHint: true },
      }));
      if (page === null) return { tools: all };
      const from = Number(req.params?.cursor ?? 0);
      const next = from + page;
      return { tools: all.slice(from, next), ...(next < all.length ? { nextCursor: String(next) } : {}) };
    });
    return server;
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers });
    if (failure === 'hang') return; // never answers
    if (required && req.headers[required[0]] !== required[1]) {
      res
        .writeHead(401, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ error: 'invalid_token', error_description: 'missing or wrong credential' }));
      return;
    }
    if (failure === 'http500' && req.method === 'POST') {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end('internal error in the stand-in');
      return;
    }
    if (url.pathname === '/mcp') {
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const server = build();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    if (url.pathname === '/sse' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      sse.set(transport.sessionId, transport);
      res.on('close', () => sse.delete(transport.sessionId));
      await build().connect(transport);
      return;
    }
    if (url.pathname === '/messages' && req.method === 'POST') {
      const transport = sse.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) {
        res.writeHead(404).end('no such session');
        return;
      }
      await transport.handlePostMessage(req, res, await readJson(req));
      return;
    }
    res.writeHead(404).end('not found');
  };

  const standin = await startStandin(handle);
  const { port } = standin;
  const goDown = standin.close;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sseUrl: `http://127.0.0.1:${port}/sse`,
    port,
    requests,
    setTools: (names) => {
      tools = names;
    },
    requireHeader: (name, value) => {
      required = value === null ? null : [name.toLowerCase(), value];
    },
    fail: (mode) => {
      failure = mode;
    },
    pageSize: (n) => {
      page = n;
    },
    goDown,
    stop: goDown,
  };
}
