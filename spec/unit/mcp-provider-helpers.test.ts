/** The small pure pieces behind the MCP and provider tasks: Fernet tokens, fnmatch globs, URL joining, the WAV. */
import { joinUrl } from '../../tasks/cloud/llm.js';
import { errorClassOf } from '../../tasks/cloud/llm-port.js';
import { globMatch } from '../../tasks/mcpclient/rows.js';
import { silentWav } from '../../tasks/provider/verify-provider-model.js';
import { urljoin } from '../../tasks/provider/verify-provider.js';
import { fernetDecrypt } from '../../tasks/secret/fernet.js';

// Made by Python's cryptography 38: Fernet(KEY).encrypt('sk-ünïcode-42'.encode()).
const KEY = 'cw_0x689RpI-jtRR7oE8h_eQsKImvJ8-SPvFeMtr5Q8=';
const TOKEN = 'gAAAAABrDppRhMo9kYJpClvNx79TlbJDp1UC1W5QlGxTUO_Zb7_SZogKBOtQyZQxzSgxHmgV4D_MbnDoQ0ES0I2mZUzzDnwGtQ==';

describe('fernetDecrypt', () => {
  test('reads a token Python encrypted, as a string or as the bytes of a BinaryField', () => {
    expect(fernetDecrypt(KEY, TOKEN)).toBe('sk-ünïcode-42');
    expect(fernetDecrypt(KEY, Buffer.from(TOKEN, 'ascii'))).toBe('sk-ünïcode-42');
  });

  test('refuses a wrong key, an altered token, a short key and what is not a token, saying which', () => {
    expect(() => fernetDecrypt('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', TOKEN)).toThrow(/invalid token/);
    const altered = `${TOKEN.slice(0, 40)}${TOKEN[40] === 'A' ? 'B' : 'A'}${TOKEN.slice(41)}`;
    expect(() => fernetDecrypt(KEY, altered)).toThrow(/invalid token/);
    expect(() => fernetDecrypt('c2hvcnQ=', TOKEN)).toThrow(/32 url-safe base64-encoded bytes/);
    expect(() => fernetDecrypt(KEY, 'hello')).toThrow(/not a Fernet token/);
  });
});

test.each([
  ['search_docs', 'search_*', true],
  ['search_docs', 'search_?ocs', true],
  ['search_docs', 'Search_*', false],
  ['admin', '[!a]dmin', false],
  ['bdmin', '[!a]dmin', true],
  ['a.b', 'a.b', true],
  ['axb', 'a.b', false],
  ['x', '[', false],
])('globMatch(%s, %s) is %s, as fnmatch.fnmatchcase', (value, pattern, expected) => {
  expect(globMatch(value, pattern)).toBe(expected);
});

test('paths join to a base URL as the openai package joins them, and connectivity paths as urljoin', () => {
  expect(joinUrl('https://api.openai.com/v1', 'chat/completions')).toBe('https://api.openai.com/v1/chat/completions');
  expect(joinUrl('https://api.openai.com/v1/', '/chat/completions')).toBe('https://api.openai.com/v1/chat/completions');
  expect(urljoin('https://api.openai.com/v1/', 'models')).toBe('https://api.openai.com/v1/models');
  expect(urljoin('https://api.openai.com/v1', 'models')).toBe('https://api.openai.com/models');
  expect(urljoin('https://api.openai.com/v1/', '')).toBe('https://api.openai.com/v1/');
});

test("statuses map to the openai package's exception classes", () => {
  expect([400, 401, 403, 404, 422, 429, 500, 503, 418].map(errorClassOf)).toEqual([
    'BadRequestError',
    'AuthenticationError',
    'PermissionDeniedError',
    'NotFoundError',
    'UnprocessableEntityError',
    'RateLimitError',
    'InternalServerError',
    'InternalServerError',
    'APIStatusError',
  ]);
});

test('the audio check sends a one-second 16 kHz mono 16-bit silent WAV', () => {
  const wav = silentWav();
  expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
  expect(wav.toString('ascii', 8, 12)).toBe('WAVE');
  expect([wav.readUInt16LE(22), wav.readUInt32LE(24), wav.readUInt16LE(34), wav.readUInt32LE(40)]).toEqual([
    1, 16000, 16, 32000,
  ]);
  expect(wav.subarray(44).every((b) => b === 0)).toBe(true);
});
