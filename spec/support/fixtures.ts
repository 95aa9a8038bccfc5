/** Loads the golden Celery 5.6 fixtures (copied from shared/fixtures into spec/fixtures). */
import fs from 'node:fs';
import path from 'node:path';
import type { RawMessage } from '../../lib/protocol/types.js';

export const FIXTURE_DIR = path.resolve(process.cwd(), 'spec/fixtures/celery-5.6');

export interface Fixture {
  properties?: Record<string, unknown> | null;
  headers?: Record<string, unknown> | null;
  body_text?: string;
  body_base64?: string;
  body_complete?: boolean;
  [k: string]: unknown;
}

export function loadFixture(name: string): Fixture {
  return JSON.parse(fs.readFileSync(path.join(FIXTURE_DIR, name), 'utf8')) as Fixture;
}

export function fixtureNames(): string[] {
  return fs.readdirSync(FIXTURE_DIR).filter((f) => f.endsWith('.json'));
}

/** A fixture as the broker would hand it to the decoder. */
export function rawFromFixture(f: Fixture): RawMessage {
  const p = f.properties ?? {};
  const body =
    f.body_base64 !== undefined ? Buffer.from(f.body_base64, 'base64') : Buffer.from(f.body_text ?? '', 'utf8');
  return {
    body,
    properties: {
      contentType: (p.content_type as string | undefined) ?? 'application/json',
      contentEncoding: (p.content_encoding as string | undefined) ?? 'utf-8',
      correlationId: p.correlation_id as string | undefined,
      replyTo: p.reply_to as string | undefined,
      priority: p.priority as number | undefined,
      headers: f.headers ?? {},
    },
  };
}
