/** Messages as a broker hands them to the decoder, and what the decoder throws when it refuses one. */
import type { RawMessage } from '../../lib/protocol/types.js';

/** `body` as delivered, JSON by its content type unless `properties` say otherwise. */
export function rawMessage(body: string | Buffer, properties: RawMessage['properties'] = {}): RawMessage {
  return {
    body: Buffer.isBuffer(body) ? body : Buffer.from(body),
    properties: { contentType: 'application/json', ...properties },
  };
}

/** The refusal `fn` throws (its code and message); a call that does not throw fails the test. */
export function refusal(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('did not throw');
}
