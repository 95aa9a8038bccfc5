/**
 * The shipped suite's cases (spec/shipped/smarter-tasks.test.ts) for the operational worker's names: prompt, plugin,
 * account, create_llmclient_request, provider, llmhost's charge, mcpclient and guardrail.
 */
import { uniqueName } from './amqp.js';
import { waitFor } from './wait.js';
import { insertRow, providerPassingEveryCheck } from './django-rows.js';
import { insertSecret } from './secrets.js';
import { LLM_API_KEY } from './shipped-world.js';
import { w, rows, one, ids } from './shipped-suite.js';
import { type Case, request, response, messages, count, shared, profileRow } from './shipped-case-helpers.js';

/** An MCP client of the MCP stand-in over HTTP, owned by the test profile; `isActive` as Smarter's flag. */
const mcpClient = (name: string, isActive: 0 | 1) =>
  profileRow('mcpclient_mcpclient', name, {
    endpoint_url: w.mcp.url,
    transport: 'http',
    is_active: isActive,
  });

export const OPERATIONAL_CASES: Case[] = [
  // prompt/tasks.py
  {
    task: 'prompt.tasks.create_prompt_history',
    phase: 1,
    prepare: async () => ({
      args: [ids.promptId, request, response, messages],
      state: 'SUCCESS',
      check: async () => {
        const [r] = await rows('SELECT request, messages FROM prompt_prompthistory WHERE prompt_id = ?', [
          ids.promptId,
        ]);
        expect(JSON.parse(String(r?.messages))).toEqual(messages);
        expect(JSON.parse(String(r?.request))).toEqual(request);
      },
    }),
  },
  {
    task: 'prompt.tasks.aggregate_prompt_history',
    phase: 1,
    prepare: async () => ({ state: 'SUCCESS', check: async (m) => expect(m.result).toBeNull() }),
  },
  {
    // Prompt.objects.create(session_key, llmclient) leaves ip_address and user_profile NULL: Smarter's database
    // refuses the row, and autoretry's three retries end in the same IntegrityError.
    task: 'prompt.tasks.create_prompt',
    phase: 1,
    prepare: async () => ({
      args: ['sk-created-by-python', ids.llmclientId],
      state: 'FAILURE',
      check: async (m) => {
        expect(JSON.stringify(m.result)).toContain('IntegrityError');
        expect(await count("SELECT COUNT(*) AS n FROM prompt_prompt WHERE session_key = 'sk-created-by-python'")).toBe(
          0,
        );
      },
    }),
  },
  {
    task: 'prompt.tasks.create_prompt_tool_call_history',
    phase: 1,
    prepare: async () => ({
      args: [ids.promptId, ids.pluginId, 'get_weather', JSON.stringify({ city: 'Paris' }), request, response],
      state: 'SUCCESS',
      check: async () => {
        const r = await one(
          'SELECT plugin_id, function_name, function_args FROM prompt_prompttoolcall WHERE prompt_id = ?',
          [ids.promptId],
        );
        expect({ ...r, plugin_id: Number(r?.plugin_id) }).toEqual({
          plugin_id: ids.pluginId,
          function_name: 'get_weather',
          function_args: '{"city":"Paris"}',
        });
      },
    }),
  },
  {
    task: 'prompt.tasks.create_prompt_plugin_usage',
    phase: 1,
    prepare: async () => ({
      kwargs: { prompt_id: ids.promptId, plugin_id: ids.pluginId, input_text: 'weather in Paris?' },
      state: 'SUCCESS',
      check: async () => {
        const usage = await rows('SELECT plugin_id, input_text FROM prompt_promptpluginusage WHERE prompt_id = ?', [
          ids.promptId,
        ]);
        expect(usage.map((r) => ({ ...r, plugin_id: Number(r.plugin_id) }))).toEqual([
          { plugin_id: ids.pluginId, input_text: 'weather in Paris?' },
        ]);
      },
    }),
  },
  // plugin/tasks.py
  {
    task: 'plugin.tasks.create_plugin_selector_history',
    phase: 1,
    prepare: async () => ({
      kwargs: {
        plugin_id: ids.pluginId,
        user_id: ids.userId,
        input_text: 'weather?',
        messages,
        search_term: 'weather',
      },
      state: 'SUCCESS',
      check: async () => {
        const r = await one(
          'SELECT search_term, messages FROM plugin_pluginselectorhistory WHERE plugin_selector_id = ?',
          [ids.selectorId],
        );
        expect(r?.search_term).toBe('weather');
        expect(JSON.parse(String(r?.messages))).toEqual({ input_text: 'weather?' });
      },
    }),
  },
  {
    task: 'plugin.tasks.create_plugin_charge',
    phase: 1,
    prepare: async () => ({
      kwargs: { plugin_id: ids.pluginId },
      state: 'SUCCESS',
      check: async (m) => expect(m.result).toBeNull(),
    }),
  },
  // account/tasks.py
  {
    task: 'account.tasks.create_charge',
    phase: 1,
    prepare: async () => {
      shared.chargeLocator = `userprofile-${uniqueName('r')}`;
      return {
        kwargs: {
          resource_locator: shared.chargeLocator,
          charge_type: 'completion',
          prompt_tokens: 455,
          completion_tokens: 154,
          total_tokens: 609,
          total_cost: { __decimal__: '2.50' },
          provider: 'openai',
          reference: 'fp_b547601dbd',
        },
        state: 'SUCCESS',
        check: async () => {
          expect(
            await rows('SELECT charge_type, total_tokens, total_cost FROM account_charge WHERE resource_locator = ?', [
              shared.chargeLocator,
            ]),
          ).toEqual([{ charge_type: 'completion', total_tokens: 609, total_cost: '2.50000000' }]);
        },
      };
    },
  },
  {
    // aggregate_charges(): the charges rolled into account_aggregatedcharges, then deleted.
    task: 'account.tasks.aggregate_records',
    phase: 2,
    prepare: async () => ({
      state: 'SUCCESS',
      check: async () => {
        expect(
          await count('SELECT COUNT(*) AS n FROM account_charge WHERE resource_locator = ?', [shared.chargeLocator]),
        ).toBe(0);
        expect(
          await count('SELECT COUNT(*) AS n FROM account_aggregatedcharges WHERE resource_locator = ?', [
            shared.chargeLocator,
          ]),
        ).toBe(1);
      },
    }),
  },
  {
    task: 'account.tasks.evaluate_budget_constraints',
    phase: 1,
    prepare: async () => ({ state: 'SUCCESS', check: async (m) => expect(m.result).toBe(0) }),
  },
  // llmclient/tasks/create_llmclient_request.py
  {
    task: 'llmclient.tasks.create_llmclient_request.create_llmclient_request',
    phase: 1,
    prepare: async () => ({
      args: [ids.llmclientId, { session_key: 'sk-shipped', prompt: 'hi' }],
      state: 'SUCCESS',
      check: async () => {
        const requests = await rows(
          'SELECT llmclient_id, session_key FROM llmclient_llmclientrequests WHERE session_key = ?',
          ['sk-shipped'],
        );
        expect(requests.map((r) => ({ ...r, llmclient_id: Number(r.llmclient_id) }))).toEqual([
          { llmclient_id: ids.llmclientId, session_key: 'sk-shipped' },
        ]);
      },
    }),
  },
  // provider/tasks.py, provider/verification.py: the test bank against the LLM stand-in, the production key from
  // the environment (<NAME>_API_KEY, in the chart's app Secret).
  {
    task: 'provider.tasks.verify_provider_model',
    phase: 1,
    prepare: async () => {
      const provider = await profileRow('provider_provider', 'acme', {
        base_url: w.llm.baseUrl,
        api_key_id: await insertSecret(w.t.db, ids.profileId, w.fernetKey, LLM_API_KEY),
        connectivity_test_path: 'models',
      });
      const model = await insertRow(w.t.db, 'provider_providermodel', {
        provider_id: provider,
        name: 'gpt-4o',
        supports_streaming: 1,
        supports_tools: 1,
      });
      return {
        kwargs: { provider_model_id: model },
        state: 'SUCCESS',
        check: async () => {
          expect((await one('SELECT is_active FROM provider_providermodel WHERE id = ?', [model]))?.is_active).toBe(1);
          const checks = await rows(
            'SELECT verification_type AS type, is_successful AS ok FROM provider_providermodelverification WHERE provider_model_id = ?',
            [model],
          );
          expect(checks.length).toBeGreaterThan(2);
          expect(checks.every((c) => c.ok === 1)).toBe(true);
        },
      };
    },
  },
  {
    task: 'provider.tasks.verify_provider',
    phase: 1,
    prepare: async () => {
      for (const [path, html] of [
        ['/site', '<!DOCTYPE html><html><body>Acme AI</body></html>'],
        ['/tos', '<html><h1>Terms of Service</h1></html>'],
        ['/docs', '<html><h1>Documentation</h1></html>'],
        ['/privacy', '<html><h1>Privacy Policy</h1></html>'],
      ] as const) {
        w.llm.pages.set(path, { status: 200, html });
      }
      const provider = await profileRow('provider_provider', 'acmegood', {
        base_url: w.llm.baseUrl,
        api_key_id: await insertSecret(w.t.db, ids.profileId, w.fernetKey, 'sk-secret-not-sent'),
        connectivity_test_path: 'models',
        ...providerPassingEveryCheck(w.llm.origin, ids.userId),
      });
      return {
        kwargs: { provider_id: provider },
        state: 'SUCCESS',
        check: async () => {
          expect(
            await one('SELECT status, is_verified, is_active FROM provider_provider WHERE id = ?', [provider]),
          ).toEqual({
            status: 'verified',
            is_verified: 1,
            is_active: 1,
          });
          expect(
            await count(
              'SELECT COUNT(*) AS n FROM provider_providerverification WHERE provider_id = ? AND is_successful = 1',
              [provider],
            ),
          ).toBe(10);
        },
      };
    },
  },
  // llmhost/tasks/__init__.py
  {
    task: 'llmhost.tasks.charge_llmhost_computes',
    phase: 1,
    prepare: async () => {
      await profileRow('llmhost_llmhostcompute', 'gpu-pool', {
        instance_type: 'g6.2xlarge',
        ready_nodes: 2,
        price_per_hour: '1.25',
      });
      return {
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toMatchObject({ 'gpu-pool': '2.5000' });
          expect(
            await count(
              "SELECT COUNT(*) AS n FROM account_charge WHERE charge_type = 'compute' AND total_cost = '2.50000000'",
            ),
          ).toBe(3);
        },
      };
    },
  },
  // mcpclient/tasks/__init__.py
  {
    task: 'mcpclient.tasks.refresh_mcpclient',
    phase: 1,
    prepare: async () => {
      const id = await mcpClient('weather', 0);
      return {
        args: [id],
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe('connected');
          const r = await one('SELECT status, server_name, tools FROM mcpclient_mcpclient WHERE id = ?', [id]);
          expect(r).toMatchObject({ status: 'connected', server_name: 'weather-server' });
          expect(String(r?.tools)).toContain('forecast');
        },
      };
    },
  },
  {
    task: 'mcpclient.tasks.refresh_mcpclients',
    phase: 1,
    prepare: async () => {
      const id = await mcpClient('weather-all', 1);
      return {
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe(1);
          // refresh_mcpclient(id) queued for the one active MCPClient, and run by the operational worker.
          await waitFor(
            async () =>
              (await one('SELECT status FROM mcpclient_mcpclient WHERE id = ?', [id]))?.status === 'connected',
            30_000,
            200,
          );
        },
      };
    },
  },
  // guardrail/tasks/__init__.py
  {
    task: 'guardrail.tasks.purge_guardrail_events',
    phase: 1,
    prepare: async () => {
      const old = 'UTC_TIMESTAMP(6) - INTERVAL 100 DAY';
      await w.t.db.execute(
        `INSERT INTO guardrail_guardrailevent (created_at, disposition, reviewed) VALUES
          (${old}, 'allowed', 0), (${old}, 'flagged', 1), (${old}, 'flagged', 0), (UTC_TIMESTAMP(6), 'allowed', 0)`,
      );
      return {
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe(2);
          expect(await count('SELECT COUNT(*) AS n FROM guardrail_guardrailevent')).toBe(2);
        },
      };
    },
  },
];
