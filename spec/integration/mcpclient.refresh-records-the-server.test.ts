/**
 * `refresh_mcpclient` and `refresh_mcpclients` on a real MariaDB with Smarter's tables, through the real MCP
 * client (`@modelcontextprotocol/sdk`) against a real MCP server on loopback (spec/support/mcp-server.ts):
 * the catalog and status written, credentials from Fernet Secrets made by Python, every failure of the
 * server recorded on the row, never raised, and a misconfigured MCPClient left as it is.
 */
import type { TaskContext } from '../../lib/registry/context.js';
import { nullLogger } from '../../lib/logger.js';
import { bindArguments } from '../../lib/registry/args.js';
import { McpConnectionError } from '../../tasks/cloud/mcp-port.js';
import { SdkMcpServers } from '../../tasks/cloud/mcp.js';
import type { SmarterDeps } from '../../tasks/env/task-env.js';
import { recordError } from '../../tasks/mcpclient/rows.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';
import { insertRow } from '../support/django-rows.js';
import { FakeCloud } from '../support/fake-cloud.js';
import { type McpStandIn, startMcpServer } from '../support/mcp-server.js';
import { fernetKey, insertSecret } from '../support/secrets.js';
import { smarterTaskFinder } from '../support/smarter-task.js';
import { testContext } from '../support/task-context.js';

const KEY = fernetKey();
const task = smarterTaskFinder({ fernetEncryptionKey: KEY });
const REFRESH = 'smarter.apps.mcpclient.tasks.refresh_mcpclient';
const REFRESH_ALL = 'smarter.apps.mcpclient.tasks.refresh_mcpclients';

let t: TestDatabase;
let mcp: McpStandIn;
let profileId: number;
let deps: SmarterDeps;
let publicOnly: SmarterDeps;

beforeAll(async () => {
  t = await createTestDatabase('mcp');
  mcp = await startMcpServer({
    name: 'weather-server',
    version: '2.0.1',
    tools: ['forecast', 'alerts', 'admin_reset'],
  });
  profileId = (await seed(t.db)).profileId;
  const cloud = new FakeCloud().deps;
  deps = { db: t.db, cloud: { ...cloud, mcp: new SdkMcpServers({ allowPrivateEndpoints: true }, nullLogger()) } };
  publicOnly = {
    db: t.db,
    cloud: { ...cloud, mcp: new SdkMcpServers({ allowPrivateEndpoints: false }, nullLogger()) },
  };
}, 60_000);

afterAll(async () => {
  await mcp?.stop();
  await t?.drop();
});

beforeEach(() => {
  mcp.setTools(['forecast', 'alerts', 'admin_reset']);
  mcp.requireHeader('authorization', null);
  mcp.fail(null);
  mcp.pageSize(null);
});

let n = 0;
async function mcpclient(cols: Record<string, unknown> = {}): Promise<number> {
  return insertRow(t.db, 'mcpclient_mcpclient', {
    name: `client${++n}`,
    user_profile_id: profileId,
    endpoint_url: mcp.url,
    transport: 'http',
    ...cols,
  });
}

async function row(id: number): Promise<Record<string, unknown>> {
  const [r] = await t.db.select(
    'SELECT status, server_name, server_version, protocol_version, tools, last_error, last_connected_at, name FROM mcpclient_mcpclient WHERE id = ?',
    [id],
  );
  return { ...r, tools: typeof r?.tools === 'string' ? (JSON.parse(r.tools) as unknown) : r?.tools };
}

async function refresh(id: unknown, d: SmarterDeps = deps): Promise<unknown> {
  const x = task(REFRESH);
  return x.run(bindArguments(x, [id], {}), testContext(d, REFRESH));
}

describe('own wiring: registry', () => {
  test("both tasks answer under Smarter's names on the operational queue, without autoretry", () => {
    for (const name of [REFRESH, REFRESH_ALL]) {
      expect(task(name).queue).toBe('default_celery_task_queue');
      expect(task(name).retry).toBeUndefined();
    }
    expect(task(REFRESH).argNames).toEqual(['mcpclient_id']);
    expect(task(REFRESH_ALL).argNames).toEqual([]);
  });
});

describe('own wiring: refresh_mcpclient', () => {
  test('connects over Streamable HTTP, records the catalog, and returns "connected"', async () => {
    const id = await mcpclient();
    await expect(refresh(id)).resolves.toBe('connected');
    const r = await row(id);
    expect(r).toMatchObject({
      status: 'connected',
      server_name: 'weather-server',
      server_version: '2.0.1',
      last_error: null,
    });
    expect(r.tools).toEqual(['forecast', 'alerts', 'admin_reset']);
    expect(String(r.protocol_version)).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(r.last_connected_at).not.toBeNull();
    expect(mcp.requests.at(-1)?.headers['user-agent']).toMatch(/^Smarter\/.* MCPClient/);
  });

  test('a tool the server adds or drops shows in the next refresh', async () => {
    const id = await mcpclient();
    await refresh(id);
    mcp.setTools(['forecast', 'radar']);
    await refresh(id);
    expect((await row(id)).tools).toEqual(['forecast', 'radar']);
  });

  test("tools records only what allowed_tools' glob patterns admit", async () => {
    const id = await mcpclient({ allowed_tools: JSON.stringify(['fore*', 'a?erts', '[!x]dmin_reset_never']) });
    await refresh(id);
    expect((await row(id)).tools).toEqual(['forecast', 'alerts']);
  });

  test('every page of tools/list is read', async () => {
    mcp.setTools(['a', 'b', 'c', 'd', 'e']);
    mcp.pageSize(2);
    const id = await mcpclient();
    await refresh(id);
    expect((await row(id)).tools).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  test('the legacy SSE transport works too', async () => {
    const id = await mcpclient({ transport: 'sse', endpoint_url: mcp.sseUrl });
    await expect(refresh(id)).resolves.toBe('connected');
    expect(await row(id)).toMatchObject({
      server_name: 'weather-server',
      protocol_version: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) as unknown,
    });
  });

  test("a bearer token is read from the Fernet Secret (made by Python) and sent; the Secret's last_accessed moves", async () => {
    mcp.requireHeader('authorization', 'Bearer tok-123');
    const secret = await insertSecret(t.db, profileId, KEY, 'tok-123');
    const id = await mcpclient({
      auth_type: 'bearer_token',
      credentials_id: secret,
      headers: JSON.stringify({ 'X-Team': 'blue' }),
    });
    await expect(refresh(id)).resolves.toBe('connected');
    expect(mcp.requests.at(-1)?.headers['x-team']).toBe('blue');
    const [s] = await t.db.select('SELECT last_accessed FROM secret_secret WHERE id = ?', [secret]);
    expect(s?.last_accessed).not.toBeNull();
  });

  test("an api_key goes in the MCPClient's api_key_header", async () => {
    mcp.requireHeader('x-weather-key', 'k-9');
    const id = await mcpclient({
      auth_type: 'api_key',
      api_key_header: 'X-Weather-Key',
      credentials_id: await insertSecret(t.db, profileId, KEY, 'k-9'),
    });
    await expect(refresh(id)).resolves.toBe('connected');
  });

  test('a refused credential is recorded as "error" with the HTTP status, and the last good tools are kept', async () => {
    const id = await mcpclient();
    await refresh(id);
    mcp.requireHeader('authorization', 'Bearer right');
    await expect(refresh(id)).resolves.toBe('error');
    const r = await row(id);
    expect(r.status).toBe('error');
    expect(r.last_error).toMatch(new RegExp(`^MCPClient ${String(r.name)} could not list its tools: .*401`));
    expect(r.tools).toEqual(['forecast', 'alerts', 'admin_reset']);
  });

  test('a server that is down is recorded, not raised', async () => {
    const down = await startMcpServer();
    await down.goDown();
    const id = await mcpclient({ endpoint_url: down.url });
    await expect(refresh(id)).resolves.toBe('error');
    expect((await row(id)).last_error).toMatch(/could not list its tools: .*ECONNREFUSED/);
  });

  test('a server that answers HTTP 500, or a JSON-RPC error, is recorded with what it said', async () => {
    const id = await mcpclient();
    mcp.fail('http500');
    await expect(refresh(id)).resolves.toBe('error');
    expect((await row(id)).last_error).toMatch(/500/);
    mcp.fail('rpc-error');
    await expect(refresh(id)).resolves.toBe('error');
    expect((await row(id)).last_error).toMatch(/the tool registry is unavailable/);
  });

  test("a server that never answers times out after the MCPClient's timeout", async () => {
    mcp.fail('hang');
    const id = await mcpclient({ timeout: 1 });
    await expect(refresh(id)).resolves.toBe('error');
    expect((await row(id)).last_error).toMatch(/timed out after 1 seconds/);
  }, 15_000);

  // Smarter's smarter/smarter/apps/mcpclient/tasks/__init__.py catches SmarterMCPClientException: only a
  // connection error is recorded (caching.py record_connection_failure); a configuration error is logged and the
  // task returns the MCPClient's status as it was.
  test.each([[{ endpoint_url: null }], [{ transport: 'stdio' }], [{ auth_type: 'bearer_token' }]])(
    'a misconfigured MCPClient (%o) is left as it is, and its status returned',
    async (cols) => {
      const id = await mcpclient();
      await expect(refresh(id)).resolves.toBe('connected');
      const keys = Object.keys(cols);
      await t.db.execute(`UPDATE mcpclient_mcpclient SET ${keys.map((k) => `${k} = ?`).join(', ')} WHERE id = ?`, [
        ...Object.values(cols),
        id,
      ]);
      const before = await t.db.select('SELECT * FROM mcpclient_mcpclient WHERE id = ?', [id]);
      await expect(refresh(id)).resolves.toBe('connected');
      expect(await t.db.select('SELECT * FROM mcpclient_mcpclient WHERE id = ?', [id])).toEqual(before);
    },
  );

  test("a Secret the worker's key cannot decrypt fails the task with SmarterValueError, naming the Secret, and changes nothing", async () => {
    // Smarter's Secret.get_secret raises SmarterValueError, which the task does not catch.
    const secret = await insertSecret(t.db, profileId, fernetKey(), 'tok', 'other-key-secret');
    const id = await mcpclient({ auth_type: 'bearer_token', credentials_id: secret });
    const before = await row(id);
    await expect(refresh(id)).rejects.toMatchObject({
      pyType: 'SmarterValueError',
      message: expect.stringMatching(/Secret other-key-secret: Failed to decrypt the secret: invalid token/) as unknown,
    });
    expect(await row(id)).toEqual(before);
  });

  test("the status is written as Smarter's .update() writes it: updated_at stays, last_error is cut to 2000 characters", async () => {
    // smarter/smarter/apps/mcpclient/caching.py: record_connection and record_connection_failure (error[:2000]).
    const id = await mcpclient();
    await t.db.execute("UPDATE mcpclient_mcpclient SET updated_at = '2026-01-01 00:00:00' WHERE id = ?", [id]);
    await refresh(id);
    // The cut falls after the first astral character: a UTF-16 slice would split it in two.
    const prefix = `MCPClient client${n} could not list its tools: `;
    const detail = `${'x'.repeat(2000 - prefix.length - 1)}${'\u{1F329}'.repeat(5)}`;
    const failing: SmarterDeps = {
      ...deps,
      cloud: {
        ...deps.cloud,
        mcp: { discover: (target) => Promise.reject(new McpConnectionError(target.url, 'list tools of', detail)) },
      },
    };
    await expect(refresh(id, failing)).resolves.toBe('error');
    const [r] = await t.db.select('SELECT status, last_error, updated_at FROM mcpclient_mcpclient WHERE id = ?', [id]);
    expect(r?.updated_at).toBe('2026-01-01 00:00:00.000000');
    expect(r?.last_error).toBe(`${prefix}${'x'.repeat(2000 - prefix.length - 1)}\u{1F329}`);
    expect(Array.from(String(r?.last_error))).toHaveLength(2000);
  });

  test("Smarter's public-URL rule: http and loopback endpoints are refused unless allowed", async () => {
    const id = await mcpclient();
    await expect(refresh(id, publicOnly)).resolves.toBe('error');
    expect((await row(id)).last_error).toMatch(/must be https/);
    await t.db.execute('UPDATE mcpclient_mcpclient SET endpoint_url = ? WHERE id = ?', ['https://127.0.0.1/mcp', id]);
    await refresh(id, publicOnly);
    expect((await row(id)).last_error).toMatch(/non-public address 127\.0\.0\.1/);
  });

  test('the database failing is the one failure that is raised, not recorded', async () => {
    const id = await mcpclient();
    const failing = {
      ...deps,
      db: { ...t.db, execute: () => Promise.reject(new Error('Lost connection to MySQL server during query')) },
    };
    await expect(refresh(id, failing)).rejects.toThrow(/Lost connection/);
  });

  test('an MCPClient that does not exist returns None', async () => {
    await expect(refresh(999_999_999)).resolves.toBeNull();
  });

  test('an id that is not an integer is refused naming mcpclient_id', () => {
    expect(() => bindArguments(task(REFRESH), ['abc'], {})).toThrow(/mcpclient_id/);
  });
});

// Smarter's mcpclient/tasks/__init__.py records a connection with a queryset .update(), so updated_at stays
// as it was, and keeps the first 2,000 characters of a failure's message.
describe("own wiring: refresh_mcpclient: row writes as Smarter's", () => {
  const LONG_AGO = '2020-01-02 03:04:05.000000';
  const stamp = async (id: number) =>
    (await t.db.select('SELECT updated_at, last_error FROM mcpclient_mcpclient WHERE id = ?', [id]))[0];

  test('a connection leaves updated_at as it was', async () => {
    const id = await mcpclient({ updated_at: LONG_AGO });
    await expect(refresh(id)).resolves.toBe('connected');
    expect((await stamp(id))?.updated_at).toBe(LONG_AGO);
  });

  test('a failure leaves updated_at as it was, and a message keeps its first 2,000 characters', async () => {
    const id = await mcpclient({ updated_at: LONG_AGO });
    await expect(refresh(id, publicOnly)).resolves.toBe('error');
    expect((await stamp(id))?.updated_at).toBe(LONG_AGO);
    await recordError(t.db, id, `${'é'.repeat(1999)}xyz`);
    expect([...String((await stamp(id))?.last_error)]).toEqual([...'é'.repeat(1999), 'x']);
  });
});

describe('own wiring: refresh_mcpclients', () => {
  test('queues refresh_mcpclient(id), positionally, for every active MCPClient and returns how many', async () => {
    await t.db.execute('UPDATE mcpclient_mcpclient SET is_active = 0');
    const a = await mcpclient();
    const b = await mcpclient();
    await mcpclient({ is_active: 0 });
    const sent: unknown[][] = [];
    const ctx = {
      ...testContext(deps, REFRESH_ALL),
      applyAsync: ((name: string, args?: unknown[], kwargs?: Record<string, unknown>, opts?: unknown) => (
        sent.push([name, args, kwargs, opts]),
        Promise.resolve(`id${sent.length}`)
      )) as TaskContext<SmarterDeps>['applyAsync'],
    };
    const x = task(REFRESH_ALL);
    await expect(x.run(bindArguments(x, [], {}), ctx)).resolves.toBe(2);
    expect(sent).toEqual([
      [REFRESH, [a], {}, { queue: 'default_celery_task_queue' }],
      [REFRESH, [b], {}, { queue: 'default_celery_task_queue' }],
    ]);
  });
});
