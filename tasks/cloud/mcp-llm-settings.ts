/**
 * Settings of the MCP and LLM provider ports, and the key of Smarter's Secrets both read credentials with
 * (Smarter's `fernet_encryption_key`, NAME then SMARTER_NAME).
 */
import { parsers, type Setting, type ValuesOf } from '../../lib/config/settings.js';

const setting = <T>(s: Setting<T>): Setting<T> => s;

export const MCP_LLM_SETTINGS = {
  fernetEncryptionKey: setting({
    env: ['FERNET_ENCRYPTION_KEY', 'SMARTER_FERNET_ENCRYPTION_KEY'],
    default: '',
    parse: parsers.string,
    secret: true,
    doc: "Fernet key of Smarter's Secrets (MCP credentials, provider and vectorstore keys, LLMHost tokens and API keys): the key the Python side uses.",
  }),
  mcpAllowPrivateEndpoints: setting({
    env: ['SMARTER_WORKER_MCP_ALLOW_PRIVATE_ENDPOINTS'],
    default: false,
    parse: parsers.bool,
    doc: 'Let MCPClients reach http and non-public addresses (Smarter allows only public https; for tests and labs).',
  }),
  llmTimeout: setting({
    env: ['SMARTER_WORKER_LLM_TIMEOUT'],
    default: 10,
    parse: parsers.seconds,
    doc: 'Seconds for each LLM provider call of the verification test bank.',
  }),
};

export type McpLlmConfig = ValuesOf<typeof MCP_LLM_SETTINGS>;
