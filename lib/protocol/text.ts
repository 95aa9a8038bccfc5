/**
 * A text body (JSON, YAML) read by its `content_encoding` as kombu reads it (`codecs.decode(body,
 * encoding)`), strictly: a body that is not valid in its encoding is a decode error, never a text with
 * U+FFFD in it, and an encoding we cannot read is refused by name, never guessed to be UTF-8.
 */
import { isUtf8 } from 'node:buffer';
import { ProtocolError } from '../errors.js';

/** kombu's SKIP_DECODE: the bytes go to the deserializer as they are (Python's json reads them as UTF-8). */
const AS_IS = new Set(['binary', 'ascii-8bit']);

type Reader = (body: Buffer) => string | null;

const utf16 =
  (label: 'utf-16le' | 'utf-16be'): Reader =>
  (body) => {
    try {
      return new TextDecoder(label, { fatal: true, ignoreBOM: false }).decode(body);
    } catch {
      return null;
    }
  };

const READERS: Record<string, Reader> = {
  'utf-8': (b) => (isUtf8(b) ? b.toString('utf8') : null),
  // Python's utf-16 reads a byte-order mark and takes little-endian without one.
  'utf-16': (b) => (b[0] === 0xfe && b[1] === 0xff ? utf16('utf-16be')(b) : utf16('utf-16le')(b)),
  'utf-16-le': utf16('utf-16le'),
  'utf-16-be': utf16('utf-16be'),
  ascii: (b) => (b.every((c) => c < 0x80) ? b.toString('latin1') : null),
  'latin-1': (b) => b.toString('latin1'),
};

const ALIASES: Record<string, string> = {
  utf8: 'utf-8',
  u8: 'utf-8',
  utf16: 'utf-16',
  'utf-16le': 'utf-16-le',
  'utf-16be': 'utf-16-be',
  'us-ascii': 'ascii',
  latin1: 'latin-1',
  'iso-8859-1': 'latin-1',
  'iso8859-1': 'latin-1',
};

export const SUPPORTED_ENCODINGS = [...Object.keys(READERS), ...AS_IS];

function readerFor(contentEncoding: string | undefined): { name: string; declared: string; reader: Reader } {
  const declared = (contentEncoding ?? '').trim().toLowerCase().replace(/_/g, '-');
  const name = declared === '' || AS_IS.has(declared) ? 'utf-8' : (ALIASES[declared] ?? declared);
  const reader = READERS[name];
  if (!reader) {
    throw new ProtocolError(
      'PROTOCOL_DECODE',
      'properties.content_encoding',
      `unsupported content_encoding ${JSON.stringify(contentEncoding)} (supported: ${SUPPORTED_ENCODINGS.join(', ')})`,
    );
  }
  return { name, declared, reader };
}

/** For binary bodies (msgpack), read as they are: the encoding must still be one that exists. */
export function checkEncodingName(contentEncoding: string | undefined): void {
  readerFor(contentEncoding);
}

export function decodeText(body: Buffer, contentEncoding: string | undefined): string {
  const { name, declared, reader } = readerFor(contentEncoding);
  const text = reader(body);
  if (text === null) {
    throw new ProtocolError(
      'PROTOCOL_DECODE',
      'body',
      `the body is not valid ${name}${declared === '' ? ' (no content_encoding: UTF-8, as kombu reads it)' : ''}`,
    );
  }
  return text;
}
