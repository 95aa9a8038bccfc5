/**
 * `verify_provider_model` and `verify_provider` on a real MariaDB with Smarter's tables, through our fetch
 * client against an OpenAI-compatible stand-in on loopback (spec/support/llm-standin.ts): each check's row,
 * the blackball order, validity for ten days, the model and provider rows written, LLM errors recorded as
 * failed checks (as Smarter catches them), and the configuration errors that escape to autoretry.
 */
import { nullLogger } from '../../lib/logger.js';
import { bindArguments } from '../../lib/registry/args.js';
import { FetchLlmProviders } from '../../tasks/cloud/llm.js';
import type { SmarterDeps } from '../../tasks/env/task-env.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';
import { insertRow, providerPassingEveryCheck } from '../support/django-rows.js';
import { FakeCloud } from '../support/fake-cloud.js';
import { type LlmStandIn, startLlmStandIn } from '../support/llm-standin.js';
import { fernetKey, insertSecret } from '../support/secrets.js';
import { smarterTaskFinder } from '../support/smarter-task.js';
import { testContext } from '../support/task-context.js';

const KEY = fernetKey();
const API_KEY = 'sk-test-0123456789';
const environ: Record<string, string> = {};
const task = smarterTaskFinder({ fernetEncryptionKey: KEY, environ: (n) => environ[n] });
const VERIFY_MODEL = 'smarter.apps.provider.tasks.verify_provider_model';
const VERIFY_PROVIDER = 'smarter.apps.provider.tasks.verify_provider';

let t: TestDatabase;
let llm: LlmStandIn;
let ids: Awaited<ReturnType<typeof seed>>;
let deps: SmarterDeps;
let secretId: number;

beforeAll(async () => {
  t = await createTestDatabase('provider');
  llm = await startLlmStandIn({ apiKey: API_KEY, models: ['gpt-4o', 'gpt-4o-mini', 'tts-1', 'dall-e-2'] });
  ids = await seed(t.db);
  secretId = await insertSecret(t.db, ids.profileId, KEY, API_KEY);
  deps = {
    db: t.db,
    cloud: { ...new FakeCloud().deps, llm: new FetchLlmProviders({ timeoutSeconds: 5 }, nullLogger()) },
  };
  llm.pages.set('/site', { status: 200, html: '<!DOCTYPE html><html><body>Acme AI</body></html>' });
  llm.pages.set('/tos', { status: 200, html: '<html><h1>Terms of Service</h1></html>' });
  llm.pages.set('/docs', { status: 200, html: '<html><h1>Documentation</h1></html>' });
  llm.pages.set('/privacy', { status: 200, html: '<html><h1>Privacy Policy</h1></html>' });
}, 60_000);

afterAll(async () => {
  await llm?.stop();
  await t?.drop();
});

beforeEach(() => {
  llm.fail(null);
  llm.requests.length = 0;
});

let n = 0;
async function provider(cols: Record<string, unknown> = {}): Promise<number> {
  const name = `acme${++n}`;
  environ[`${name.toUpperCase()}_API_KEY`] = API_KEY;
  const row = {
    name,
    user_profile_id: ids.profileId,
    base_url: llm.baseUrl,
    api_key_id: secretId,
    connectivity_test_path: 'models',
    ...cols,
  };
  return insertRow(t.db, 'provider_provider', row);
}

/** A provider every check of the provider bank passes, already `verified` (Smarter's can_activate needs it). */
const goodProvider = async (cols: Record<string, unknown> = {}) =>
  provider({
    // The provider bank never reads the Secret: the connectivity test sends the production key.
    api_key_id: await insertSecret(t.db, ids.profileId, KEY, 'sk-secret-not-sent'),
    ...providerPassingEveryCheck(llm.origin, ids.userId),
    ...cols,
  });

async function model(providerId: number, name: string, supports: Record<string, number> = {}): Promise<number> {
  const flags = Object.fromEntries(Object.entries(supports).map(([c, v]) => [`supports_${c}`, v]));
  return insertRow(t.db, 'provider_providermodel', { provider_id: providerId, name, ...flags });
}

const run = (name: string, kwargs: Record<string, unknown>) => {
  const x = task(name);
  return x.run(bindArguments(x, [], kwargs), testContext(deps, name));
};

async function checks(
  table: 'provider_providermodelverification' | 'provider_providerverification',
  owner: string,
  id: number,
): Promise<Record<string, { ok: number; error: unknown }>> {
  const rows = await t.db.select(
    `SELECT verification_type AS type, is_successful AS ok, error_message AS error FROM ${table} WHERE ${owner} = ? ORDER BY id`,
    [id],
  );
  return Object.fromEntries(rows.map((r) => [String(r.type), { ok: Number(r.ok), error: r.error }]));
}
const modelChecks = (id: number) => checks('provider_providermodelverification', 'provider_model_id', id);
const providerChecks = (id: number) => checks('provider_providerverification', 'provider_id', id);
const modelActive = async (id: number) =>
  Number((await t.db.select('SELECT is_active FROM provider_providermodel WHERE id = ?', [id]))[0]?.is_active);
const chatCalls = () => llm.requests.filter((r) => r.path === '/v1/chat/completions');

describe('own wiring: registry', () => {
  test("both answer under Smarter's names on the operational queue, with Smarter's autoretry", () => {
    for (const name of [VERIFY_MODEL, VERIFY_PROVIDER]) {
      expect(task(name).queue).toBe('default_celery_task_queue');
      expect(task(name).retry).toMatchObject({ autoretryFor: 'all', maxRetries: 3, retryBackoff: true });
    }
    expect(task(VERIFY_MODEL).argNames).toEqual(['provider_model_id']);
    expect(task(VERIFY_PROVIDER).argNames).toEqual(['provider_id']);
  });
});

describe('own wiring: verify_provider_model', () => {
  test("a model passing its checks is activated; each check is a successful row; the calls are the test bank's", async () => {
    const id = await model(await provider(), 'gpt-4o', { streaming: 1, tools: 1, image_input: 1, code_interpreter: 1 });
    await expect(run(VERIFY_MODEL, { provider_model_id: id })).resolves.toBeNull();
    expect(await modelActive(id)).toBe(1);
    const c = await modelChecks(id);
    expect(Object.keys(c)).toEqual([
      'streaming',
      'tools',
      'text_input',
      'image_input',
      'code_interpreter',
      'text_to_text',
      'translation',
      'summarization',
    ]);
    expect(Object.values(c).every((x) => x.ok === 1 && x.error === null)).toBe(true);
    const calls = chatCalls();
    expect(calls.every((r) => r.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
    expect(calls[0]?.body).toMatchObject({
      model: 'gpt-4o',
      stream: true,
      max_completion_tokens: 10,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(calls[1]?.body).toMatchObject({ tools: [{ type: 'function', function: { name: 'get_weather' } }] });
    expect(JSON.stringify(calls[3]?.body)).toContain('data:image/png;base64,');
  });

  test('audio input, fine-tuning, image and speech generation call their endpoints; fine-tuning fails as OpenAI answers a dummy file', async () => {
    const id = await model(await provider(), 'gpt-4o', {
      text_input: 0,
      text_generation: 0,
      translation: 0,
      summarization: 0,
      audio_input: 1,
      image_generation: 1,
      audio_generation: 1,
    });
    await run(VERIFY_MODEL, { provider_model_id: id });
    expect(await modelChecks(id)).toEqual({
      audio_input: { ok: 1, error: null },
      text_to_image: { ok: 1, error: null },
      text_to_audio: { ok: 1, error: null },
    });
    const transcription = llm.requests.find((r) => r.path === '/v1/audio/transcriptions');
    expect(transcription?.body?.model).toBe('gpt-4o-transcribe');
    expect((transcription?.body?.file as Blob).size).toBe(44 + 32000);

    const tuned = await model(await provider(), 'gpt-4o', {
      text_input: 0,
      text_generation: 0,
      translation: 0,
      summarization: 0,
      fine_tuning: 1,
    });
    await run(VERIFY_MODEL, { provider_model_id: tuned });
    expect((await modelChecks(tuned)).fine_tuning?.error).toMatch(
      /^LLM post to http:\/\/127\.0\.0\.1:\d+\/v1\/fine_tuning\/jobs: 400 invalid training_file/,
    );
    expect(await modelActive(tuned)).toBe(0);
  });

  test('a valid check is not run again for ten days; a stale one is', async () => {
    const id = await model(await provider(), 'gpt-4o');
    await run(VERIFY_MODEL, { provider_model_id: id });
    llm.requests.length = 0;
    await run(VERIFY_MODEL, { provider_model_id: id });
    expect(chatCalls()).toHaveLength(0);
    await t.db.execute(
      "UPDATE provider_providermodelverification SET updated_at = UTC_TIMESTAMP(6) - INTERVAL 11 DAY WHERE provider_model_id = ? AND verification_type = 'translation'",
      [id],
    );
    await run(VERIFY_MODEL, { provider_model_id: id });
    expect(chatCalls().map((r) => JSON.stringify(r.body?.messages))).toEqual([
      expect.stringContaining('Translate this to Spanish'),
    ]);
  });

  test("a wrong API key fails the first check with OpenAI's words, deactivates the model, and skips the rest (blackball)", async () => {
    const wrong = await insertSecret(t.db, ids.profileId, KEY, 'sk-wrong-key-99');
    const id = await model(await provider({ api_key_id: wrong }), 'gpt-4o');
    await t.db.execute('UPDATE provider_providermodel SET is_active = 1 WHERE id = ?', [id]);
    await run(VERIFY_MODEL, { provider_model_id: id });
    expect(await modelActive(id)).toBe(0);
    const c = await modelChecks(id);
    expect(Object.keys(c)).toEqual(['text_input']);
    expect(c.text_input?.error).toMatch(
      /^LLM create a chat completion at http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: 401 Incorrect API key provided: sk-\*\*\*99\. .* \(invalid_api_key\)$/,
    );
  });

  test.each([
    [
      404,
      'no-such-model',
      /404 The model `no-such-model` does not exist or you do not have access to it\. \(model_not_found\)/,
    ],
    [429, 'gpt-4o', /429 Rate limit reached for requests\. .* \(rate_limit_exceeded\)/],
    [500, 'gpt-4o', /500 The server had an error while processing your request/],
  ])(
    'an LLM answering %i is a failed check (Smarter catches it), not a task failure',
    async (status, name, message) => {
      if (status !== 404) llm.fail(status as 429 | 500);
      const id = await model(await provider(), name);
      await expect(run(VERIFY_MODEL, { provider_model_id: id })).resolves.toBeNull();
      expect((await modelChecks(id)).text_input?.error).toMatch(message);
      expect(await modelActive(id)).toBe(0);
    },
  );

  test('a provider that is down is a failed check naming the connection error', async () => {
    const down = await startLlmStandIn({ apiKey: API_KEY, models: ['gpt-4o'] });
    await down.goDown();
    const id = await model(await provider({ base_url: down.baseUrl }), 'gpt-4o');
    await run(VERIFY_MODEL, { provider_model_id: id });
    expect((await modelChecks(id)).text_input?.error).toMatch(
      /^LLM create a chat completion at .*: Connection error: ECONNREFUSED/,
    );
  });

  test('translation needs "hola"; summarization at most 10 characters; search always fails; code interpreter by name', async () => {
    const p = await provider();
    llm.reply('Summarize', 'A company building safe AGI for everyone');
    const a = await model(p, 'gpt-4o', { text_input: 0, text_generation: 0, translation: 0 });
    await run(VERIFY_MODEL, { provider_model_id: a });
    expect((await modelChecks(a)).summarization?.ok).toBe(0);
    llm.reply('Summarize', 'AI for all');
    const b = await model(p, 'gpt-4o-mini', {
      text_input: 0,
      text_generation: 0,
      summarization: 0,
      code_interpreter: 1,
    });
    await run(VERIFY_MODEL, { provider_model_id: b });
    expect((await modelChecks(b)).code_interpreter).toEqual({
      ok: 0,
      error: 'not one of the known code interpreter models: gpt-4o, gpt-4-turbo',
    });
    // Another provider: a provider's model names are unique (provider 0002_initial's unique_together).
    const c = await model(await provider(), 'gpt-4o', {
      text_input: 0,
      text_generation: 0,
      translation: 0,
      summarization: 0,
      search: 1,
    });
    await run(VERIFY_MODEL, { provider_model_id: c });
    expect(await modelChecks(c)).toEqual({ search: { ok: 0, error: 'the search endpoint is deprecated' } });
  });

  test('a model that does not exist returns None and calls nothing', async () => {
    await expect(run(VERIFY_MODEL, { provider_model_id: 999_999_999 })).resolves.toBeNull();
    expect(llm.requests).toHaveLength(0);
  });
});

describe('own wiring: verify_provider', () => {
  test('a verified provider passing every check stays verified and becomes active; ten successful rows', async () => {
    const id = await goodProvider();
    await expect(run(VERIFY_PROVIDER, { provider_id: id })).resolves.toBeNull();
    const [p] = await t.db.select(
      'SELECT status, is_verified, is_active, updated_at > created_at AS saved FROM provider_provider WHERE id = ?',
      [id],
    );
    expect(p).toEqual({ status: 'verified', is_verified: 1, is_active: 1, saved: 1 });
    const c = await providerChecks(id);
    expect(Object.keys(c)).toEqual([
      'api_connectivity',
      'logo',
      'contact_email',
      'support_email',
      'website_url',
      'tos_url',
      'docs_url',
      'privacy_policy_url',
      'tos_acceptance',
      'production_api_key',
    ]);
    expect(Object.values(c).every((x) => x.ok === 1)).toBe(true);
    // Smarter's connectivity test sends the production key from the environment, not the Secret.
    expect(llm.requests.find((r) => r.path === '/v1/models')?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  test('an already active provider is re-verified without a full save (updated_at stays), as activate() skips it', async () => {
    const id = await goodProvider({ is_active: 1 });
    await t.db.execute('UPDATE provider_provider SET updated_at = created_at WHERE id = ?', [id]);
    await run(VERIFY_PROVIDER, { provider_id: id });
    expect(
      (
        await t.db.select(
          'SELECT status, is_active, updated_at = created_at AS untouched FROM provider_provider WHERE id = ?',
          [id],
        )
      )[0],
    ).toEqual({ status: 'verified', is_active: 1, untouched: 1 });
  });

  test('as in Smarter, a provider not yet verified fails even when every check passes (can_activate is read first)', async () => {
    const id = await goodProvider({ status: 'unverified' });
    await run(VERIFY_PROVIDER, { provider_id: id });
    expect(
      (await t.db.select('SELECT status, is_verified, is_active FROM provider_provider WHERE id = ?', [id]))[0],
    ).toEqual({ status: 'failed', is_verified: 0, is_active: 0 });
  });

  test('a page without its words fails its check with the reason, and the bank stops there', async () => {
    llm.pages.set('/tos-missing', { status: 200, html: '<html>Welcome</html>' });
    const id = await goodProvider({ terms_of_service_url: `${llm.origin}/tos-missing` });
    await run(VERIFY_PROVIDER, { provider_id: id });
    const c = await providerChecks(id);
    expect(c.tos_url).toEqual({
      ok: 0,
      error: `GET ${llm.origin}/tos-missing: 200, not an HTML page containing "Terms of Service"`,
    });
    expect(c.docs_url).toBeUndefined();
    expect((await t.db.select('SELECT status FROM provider_provider WHERE id = ?', [id]))[0]?.status).toBe('failed');
  });

  test('a flagged provider fails without calling anything', async () => {
    const id = await goodProvider({ is_flagged: 1 });
    await run(VERIFY_PROVIDER, { provider_id: id });
    expect(llm.requests).toHaveLength(0);
    expect((await t.db.select('SELECT status FROM provider_provider WHERE id = ?', [id]))[0]?.status).toBe('failed');
  });

  test("no base_url raises Smarter's SmarterValueError, which autoretry retries", async () => {
    const id = await goodProvider({ base_url: null });
    await expect(run(VERIFY_PROVIDER, { provider_id: id })).rejects.toMatchObject({
      pyType: 'SmarterValueError',
      message: 'base_url is not set for this provider.',
    });
  });

  test('no <NAME>_API_KEY in the environment raises SmarterConfigurationError naming the provider', async () => {
    const id = await goodProvider();
    const [p] = await t.db.select('SELECT name FROM provider_provider WHERE id = ?', [id]);
    delete environ[`${String(p?.name).toUpperCase()}_API_KEY`];
    await expect(run(VERIFY_PROVIDER, { provider_id: id })).rejects.toMatchObject({
      pyType: 'SmarterConfigurationError',
      message: `Production API key for provider ${String(p?.name)} was accessed but is not set in environment variables.`,
    });
  });

  test('a provider that does not exist returns None', async () => {
    await expect(run(VERIFY_PROVIDER, { provider_id: 999_999_999 })).resolves.toBeNull();
  });
});
