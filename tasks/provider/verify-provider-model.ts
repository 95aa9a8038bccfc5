/**
 * `verify_provider_model(provider_model_id)`: runs the test bank (`provider/verification/provider_model.py`)
 * on a model, one check per capability the row claims, in Smarter's order and "blackball" style (after the
 * first failure the rest are skipped), each recorded in `provider_providermodelverification`; then
 * `is_active` = all passed. Returns None, as Smarter's task does.
 */
import * as z from 'zod';
import type { ChatRequest, LlmEndpoint, LlmProviders } from '../cloud/llm-port.js';
import type { Queryable } from '../db/database.js';
import { pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { recordTask } from '../env/queued-task.js';
import { readSecret } from '../secret/rows.js';
import {
  type Capability,
  type ProviderModelRow,
  loadProvider,
  loadProviderModel,
  setProviderModelActive,
} from './rows.js';
import { MODEL_VERIFICATIONS, check } from './verifications.js';

/** 1×1 PNG, as Smarter's image-input check sends. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mP8Xw8AAoMBgQnQn1wAAAAASUVORK5CYII=';
/** Smarter's list "as of June-2025". */
const CODE_INTERPRETER_MODELS = ['gpt-4o', 'gpt-4-turbo'];
const LONG_TEXT =
  'OpenAI is an AI research and deployment company. Our mission is to ensure that artificial general intelligence benefits all of humanity. ' +
  'We are committed to ensuring that artificial general intelligence—AI systems that are generally smarter than humans—benefits all of humanity. ' +
  'We will build safe and beneficial AGI, or help others achieve this goal.';
const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the weather in a given city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** A 1 s, 16 kHz, 16-bit mono silent WAV (Smarter builds the same with `wave`). */
export function silentWav(): Buffer {
  const data = Buffer.alloc(16000 * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(16000, 24);
  h.writeUInt32LE(32000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

type Outcome = { ok: boolean; error?: string };
const attempt = async (call: () => Promise<boolean | void>): Promise<Outcome> => {
  try {
    const r = await call();
    return { ok: r !== false };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
};

interface Bank {
  db: Queryable;
  llm: LlmProviders;
  model: ProviderModelRow;
  /** Smarter reads the key inside each check's try (`provider.api_key.get_secret()`), so a missing Secret fails the check. */
  endpoint: () => Promise<LlmEndpoint>;
}

function chatOf(model: string, content: unknown, max: number, tools?: unknown[]): ChatRequest {
  return { model, messages: [{ role: 'user', content }], maxCompletionTokens: max, ...(tools ? { tools } : {}) };
}

const run = (b: Bank, type: string, fn: () => Promise<Outcome>, opts?: { skipWhenValid?: boolean }) =>
  check(b.db, MODEL_VERIFICATIONS, b.model.id, type, fn, opts);
/** A check that passes when its call answers (and not `false`), and fails with the error it throws. */
const tries =
  (type: string, call: (b: Bank) => Promise<boolean | void>) =>
  (b: Bank): Promise<boolean> =>
    run(b, type, () => attempt(() => call(b)));
/** A check that asks the model one question (`chatOf`) and passes when it answers. */
const chats = (type: string, content: unknown, max: number, tools?: unknown[]) =>
  tries(type, async (b) => void (await b.llm.chat(await b.endpoint(), chatOf(b.model.name, content, max, tools))));
const textInput = chats('text_input', 'Hello', 5);

/** Capability → check, in Smarter's order. */
const BANK: [Capability, (b: Bank) => Promise<boolean>][] = [
  [
    'streaming',
    tries(
      'streaming',
      async (b) => (await b.llm.chatStreamFirstChunk(await b.endpoint(), chatOf(b.model.name, 'Hello', 10))) !== null,
    ),
  ],
  ['tools', chats('tools', 'What is the weather in Boston?', 10, [WEATHER_TOOL])],
  ['text_input', textInput],
  [
    'image_input',
    chats(
      'image_input',
      [
        { type: 'text', text: 'What is in this image?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      ],
      5,
    ),
  ],
  [
    'audio_input',
    tries('audio_input', async (b) =>
      b.llm.transcribe(await b.endpoint(), 'gpt-4o-transcribe', silentWav(), 'audio.wav'),
    ),
  ],
  [
    'fine_tuning',
    tries('fine_tuning', async (b) =>
      b.llm.post(await b.endpoint(), 'fine_tuning/jobs', {
        model: b.model.name,
        training_file: 'file-xxxxxxxxxxxxxxxxxxxxxxx',
      }),
    ),
  ],
  // OpenAI deprecated search: Smarter records a failure without asking, even over a valid row.
  [
    'search',
    (b) =>
      run(b, 'search', () => Promise.resolve({ ok: false, error: 'the search endpoint is deprecated' }), {
        skipWhenValid: false,
      }),
  ],
  [
    'code_interpreter',
    (b) =>
      run(b, 'code_interpreter', () =>
        Promise.resolve(
          CODE_INTERPRETER_MODELS.includes(b.model.name)
            ? { ok: true }
            : {
                ok: false,
                error: `not one of the known code interpreter models: ${CODE_INTERPRETER_MODELS.join(', ')}`,
              },
        ),
      ),
  ],
  [
    'image_generation',
    tries('text_to_image', async (b) =>
      b.llm.post(await b.endpoint(), 'images/generations', {
        model: b.model.name,
        prompt: 'A red apple on a table',
        n: 1,
        size: '256x256',
      }),
    ),
  ],
  [
    'audio_generation',
    tries('text_to_audio', async (b) =>
      b.llm.post(await b.endpoint(), 'audio/speech', {
        model: b.model.name,
        input: 'Hello, this is a test.',
        voice: 'alloy',
      }),
    ),
  ],
  [
    'text_generation',
    (b) =>
      run(b, 'text_to_text', async () =>
        (await textInput(b)) ? { ok: true } : { ok: false, error: 'the text input check failed' },
      ),
  ],
  [
    'translation',
    tries('translation', async (b) =>
      (
        (await b.llm.chat(await b.endpoint(), chatOf(b.model.name, 'Translate this to Spanish: Hello', 10))).content ??
        ''
      )
        .trim()
        .toLowerCase()
        .includes('hola'),
    ),
  ],
  [
    'summarization',
    // Smarter's test: at most 10 characters (not words) after stripping.
    tries(
      'summarization',
      async (b) =>
        (
          (
            await b.llm.chat(
              await b.endpoint(),
              chatOf(b.model.name, `Summarize this into 10 words or less: ${LONG_TEXT}`, 30),
            )
          ).content ?? ''
        ).trim().length <= 10,
    ),
  ],
];

export const verifyProviderModel = (env: TaskEnv) =>
  recordTask<{ provider_model_id: number }, null>(env, {
    name: 'smarter.apps.provider.tasks.verify_provider_model',
    params: z.strictObject({ provider_model_id: pk() }),
    async run(p, ctx) {
      const { db } = ctx.deps;
      const model = await loadProviderModel(db, p.provider_model_id);
      if (model === null) {
        ctx.logger.error('verify_provider_model: provider model does not exist', {
          provider_model_id: p.provider_model_id,
        });
        return null;
      }
      const endpoint = async (): Promise<LlmEndpoint> => {
        const provider = await loadProvider(db, model.providerId);
        if (!provider?.baseUrl) throw new Error(`provider ${provider?.name ?? model.providerId} has no base_url`);
        if (provider.apiKeyId === null) throw new Error(`provider ${provider.name} has no api_key`);
        return {
          baseUrl: provider.baseUrl,
          apiKey: await readSecret(db, env.fernetEncryptionKey, provider.apiKeyId, false),
        };
      };
      const bank: Bank = { db, llm: ctx.deps.cloud.llm, model, endpoint };
      let success = true;
      for (const [capability, test] of BANK) {
        if (model.supports[capability]) success = success && (await test(bank));
      }
      await setProviderModelActive(db, model.id, success);
      ctx.logger[success ? 'info' : 'error'](
        success ? 'verify_provider_model: verified' : 'verify_provider_model: one or more verification tests failed',
        { provider_model: model.name },
      );
      return null;
    },
  });
