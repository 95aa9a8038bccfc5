/**
 * The MCP port on `@modelcontextprotocol/sdk`'s Client. Smarter checks every request with
 * `validate_public_url` (https, standard port, public addresses only) because the endpoint is user supplied
 * and the connection is made from inside the platform; `guard` does the same before connecting unless the
 * operator allows private endpoints (tests on loopback do).
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Logger } from '../../lib/logger.js';
import { type McpCatalog, McpConnectionError, type McpServers, type McpTarget, type McpTool } from './mcp-port.js';

const MAX_TOOL_PAGES = 10;
const MAX_TOOLS = 500;
const CLIENT = { name: 'smarter', version: '0.0.0' };

export interface McpOptions {
  allowPrivateEndpoints: boolean;
  clientVersion?: string;
}

const PRIVATE = new net.BlockList();
for (const [a, p] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(a, p, 'ipv4');
}
for (const [a, p] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['::ffff:0:0', 96],
] as const) {
  PRIVATE.addSubnet(a, p, 'ipv6');
}

export class SdkMcpServers implements McpServers {
  constructor(
    private readonly options: McpOptions,
    private readonly log: Logger,
  ) {}

  async discover(target: McpTarget): Promise<McpCatalog> {
    await this.guard(target.url);
    const ms = target.timeoutSeconds * 1000;
    const transport = this.transport(target);
    const client = new Client({ name: CLIENT.name, version: this.options.clientVersion ?? CLIENT.version });
    // One deadline for the whole operation, as Smarter's `anyio.fail_after(timeout)`.
    const deadline = AbortSignal.timeout(ms);
    let onAbort = () => undefined as void;
    const timedOut = new Promise<never>((_resolve, reject) => {
      onAbort = () =>
        reject(
          new McpConnectionError(target.url, 'list the tools of', `timed out after ${target.timeoutSeconds} seconds`),
        );
      deadline.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([this.catalog(client, transport, ms), timedOut]);
    } catch (e) {
      if (e instanceof McpConnectionError) throw e;
      const detail = describe(e, target.url);
      this.log.warn('mcp discover failed', { url: target.url, detail });
      throw new McpConnectionError(target.url, 'list the tools of', detail);
    } finally {
      deadline.removeEventListener('abort', onAbort);
      await client.close().catch(() => undefined);
    }
  }

  private async catalog(client: Client, transport: Transport, ms: number): Promise<McpCatalog> {
    // The Client tells the transport the negotiated version; only the Streamable HTTP one exposes it again.
    let negotiated: string | undefined;
    const set = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = (v: string) => {
      negotiated = v;
      set?.(v);
    };
    await client.connect(transport, { timeout: ms });
    const caps = client.getServerCapabilities() ?? {};
    const tools: McpTool[] = [];
    if (caps.tools !== undefined) {
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const res = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: ms });
        for (const t of res.tools) {
          tools.push({
            name: t.name,
            description: t.description ?? '',
            title: t.title ?? null,
            inputSchema: { ...t.inputSchema },
            readOnly: t.annotations?.readOnlyHint ?? null,
            destructive: t.annotations?.destructiveHint ?? null,
          });
        }
        cursor = res.nextCursor;
        if (!cursor || tools.length >= MAX_TOOLS) break;
      }
    }
    const info = client.getServerVersion();
    return {
      protocolVersion: negotiated ?? null,
      serverName: info?.name ?? null,
      serverVersion: info?.version ?? null,
      instructions: client.getInstructions() ?? null,
      hasTools: caps.tools !== undefined,
      hasResources: caps.resources !== undefined,
      tools: tools.slice(0, MAX_TOOLS),
    };
  }

  private transport(target: McpTarget): Transport {
    const url = new URL(target.url);
    const requestInit = { headers: target.headers, redirect: 'error' as const };
    if (target.transport === 'sse') return new SSEClientTransport(url, { requestInit });
    return new StreamableHTTPClientTransport(url, { requestInit });
  }

  /** Smarter's `validate_public_url`: https, the standard port, and every address of the host public. */
  private async guard(endpoint: string): Promise<void> {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw new McpConnectionError(endpoint, 'connect to', 'not a URL');
    }
    if (this.options.allowPrivateEndpoints) {
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        throw new McpConnectionError(endpoint, 'connect to', 'only http(s) URLs are allowed');
      }
      return;
    }
    if (url.protocol !== 'https:') throw new McpConnectionError(endpoint, 'connect to', 'the URL must be https');
    if (url.port !== '' && url.port !== '443') {
      throw new McpConnectionError(endpoint, 'connect to', 'the URL must use the standard port');
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = net.isIP(host)
      ? [{ address: host, family: net.isIP(host) }]
      : await lookup(host, { all: true }).catch((e: Error) => {
          throw new McpConnectionError(endpoint, 'resolve', e.message);
        });
    for (const a of addresses) {
      if (PRIVATE.check(a.address, a.family === 6 ? 'ipv6' : 'ipv4')) {
        throw new McpConnectionError(endpoint, 'connect to', `${host} resolves to the non-public address ${a.address}`);
      }
    }
  }
}

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  cause?: unknown;
}

/** Duck-typed: fetch's errors come from another realm under jest's VM modules, where `instanceof Error` fails. */
const errorLike = (e: unknown): e is ErrorLike => typeof e === 'object' && e !== null && 'message' in e;

/** Smarter's wording: "HTTP <status> from <url>" for an HTTP answer, the leaf cause (ECONNREFUSED…) for a transport failure. */
function describe(e: unknown, url: string): string {
  let cause: unknown = e;
  while (errorLike(cause) && errorLike(cause.cause)) cause = cause.cause;
  if (!errorLike(cause)) return String(cause);
  const message = typeof cause.message === 'string' ? cause.message : '';
  const code = errorLike(e) ? e.code : undefined;
  // StreamableHTTPError and SseError carry the HTTP status as a numeric code.
  if (typeof code === 'number' && code >= 100 && code < 600) return `HTTP ${code} from ${url}: ${message}`;
  if (typeof cause.code === 'string' && !message.includes(cause.code)) return `${cause.code}: ${message}`;
  return message || (typeof cause.name === 'string' ? cause.name : 'unknown error');
}
