/**
 * Debian's Python Celery sends Smarter's MCPClient and provider tasks by name to our real worker: the MCP
 * refresh runs through the SDK client against a real MCP server, its status comes back to Python as the
 * result, and verify_provider's configuration error comes back as SmarterValueError after autoretry.
 */
import { nullLogger } from '../../lib/logger.js';
import { FetchLlmProviders } from '../../tasks/cloud/llm.js';
import { SdkMcpServers } from '../../tasks/cloud/mcp.js';
import type { SmarterDeps } from '../../tasks/env/task-env.js';
import { AMQP_URL, REDIS_URL, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';
import { insertRow } from '../support/django-rows.js';
import { type LogLine, recordingLogger } from '../support/logs.js';
import { FakeCloud } from '../support/fake-cloud.js';
import { type Harness, startWorker } from '../support/harness.js';
import { type McpStandIn, startMcpServer } from '../support/mcp-server.js';
import { smarterTasksOn } from '../support/smarter-db.js';
import { pythonJson } from '../support/python-script.js';

let t: TestDatabase;
let mcp: McpStandIn;
let h: Harness;
let profileId: number;
let lines: LogLine[];

async function python(mode: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const args = [AMQP_URL, REDIS_URL, h.queue, mode, JSON.stringify(params)];
  return (await pythonJson('spec/interop/python/mcp_client.py', args)) as Record<string, unknown>;
}

beforeAll(async () => {
  t = await createTestDatabase('e2e_mcp');
  mcp = await startMcpServer({ name: 'py-interop', tools: ['lookup', 'search'] });
  profileId = (await seed(t.db)).profileId;
  const queue = uniqueName('op');
  const rec = recordingLogger();
  lines = rec.lines;
  const deps: SmarterDeps = {
    db: t.db,
    cloud: {
      ...new FakeCloud().deps,
      mcp: new SdkMcpServers({ allowPrivateEndpoints: true }, nullLogger()),
      llm: new FetchLlmProviders({ timeoutSeconds: 5 }, nullLogger()),
    },
  };
  h = await startWorker({
    queue,
    tasks: () => smarterTasksOn(queue, `${queue}.infra`),
    deps,
    logger: rec,
    env: { CELERY_RESULT_BACKEND: REDIS_URL },
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
  await mcp?.stop();
  await t?.drop();
});

const insert = async (name: string, url: string) =>
  insertRow(t.db, 'mcpclient_mcpclient', { name, user_profile_id: profileId, endpoint_url: url, transport: 'http' });
const status = async (id: number) =>
  (await t.db.select('SELECT status, tools, last_error FROM mcpclient_mcpclient WHERE id = ?', [id]))[0];

test('own wiring: refresh_mcpclient.delay(id) from Python: the worker connects to the MCP server and Python gets "connected"', async () => {
  const id = await insert('py-ok', mcp.url);
  await expect(python('refresh', { id })).resolves.toEqual({ result: 'connected' });
  expect(await status(id)).toMatchObject({ status: 'connected', last_error: null });
  expect(JSON.parse(String((await status(id))?.tools))).toEqual(['lookup', 'search']);
}, 60_000);

test('own wiring: a server that is down: Python gets "error" (a SUCCESS result, no retry), the row says why', async () => {
  const down = await startMcpServer();
  await down.goDown();
  const id = await insert('py-down', down.url);
  await expect(python('refresh', { id })).resolves.toEqual({ result: 'error' });
  expect(String((await status(id))?.last_error)).toMatch(/ECONNREFUSED/);
  expect(
    lines.some(
      (l) => l.message.startsWith('Task smarter.apps.mcpclient.tasks.refresh_mcpclient[') && l.meta.outcome === 'retry',
    ),
  ).toBe(false);
}, 60_000);

test('own wiring: refresh_mcpclients() from Python returns the count, and the queued refreshes run', async () => {
  await t.db.execute('UPDATE mcpclient_mcpclient SET is_active = 0');
  const a = await insert('py-all-a', mcp.url);
  const b = await insert('py-all-b', mcp.url);
  await expect(python('refresh_all')).resolves.toEqual({ result: 2 });
  await waitFor(
    async () => (await status(a))?.status === 'connected' && (await status(b))?.status === 'connected',
    30_000,
  );
}, 60_000);

test.each([
  [{ args: ['abc'] }, /mcpclient_id/],
  [{ args: [] }, /mcpclient_id/],
  [{ args: [1], kwargs: { bogus: 1 } }, /bogus/],
])(
  'own wiring: bad arguments from Python (%o) are a FAILURE naming the argument; the worker goes on',
  async (call, message) => {
    const r = await python('bad', call);
    expect(r.state).toBe('FAILURE');
    expect(String(r.message)).toMatch(message);
    const id = await insert(`py-after-bad-${String(Math.random()).slice(2, 8)}`, mcp.url);
    await expect(python('refresh', { id })).resolves.toEqual({ result: 'connected' });
  },
  60_000,
);

test('own wiring: verify_provider(provider_id=…) with no base_url: autoretried, then SmarterValueError reaches Python', async () => {
  const r = {
    insertId: await insertRow(t.db, 'provider_provider', {
      name: 'nourl',
      user_profile_id: profileId,
      status: 'verified',
    }),
  };
  await expect(python('verify_provider', { id: r.insertId })).resolves.toEqual({
    state: 'FAILURE',
    exc_type: 'SmarterValueError',
    message: 'base_url is not set for this provider.',
  });
  // max_retries=3: three retries with Celery's backoff, then the failure.
  const retries = lines.filter(
    (l) => l.message.startsWith('Task smarter.apps.provider.tasks.verify_provider[') && l.meta.outcome === 'retry',
  );
  expect(retries.map((l) => l.meta.retries)).toEqual([0, 1, 2]);
}, 120_000);
