/**
 * An OTLP/HTTP trace receiver stand-in: takes what an exporter posts to `/v1/traces` in the JSON protocol
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) and keeps its spans, flattened, for a test to read.
 */
import { type StandinServer, readBody, replyJson, startStandin } from './http-standin.js';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind number: 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** Start and end, in microseconds since the epoch. */
  startUs: number;
  endUs: number;
  links: Array<{ traceId: string; spanId: string }>;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  events: Array<{ name: string; attributes: Record<string, string | number | boolean> }>;
  resource: Record<string, string | number | boolean>;
}

type Json = Record<string, unknown>;

function value(v: unknown): string | number | boolean {
  const o = (v ?? {}) as Json;
  if (typeof o.stringValue === 'string') return o.stringValue;
  if (o.intValue !== undefined) return Number(o.intValue);
  if (typeof o.doubleValue === 'number') return o.doubleValue;
  if (typeof o.boolValue === 'boolean') return o.boolValue;
  return JSON.stringify(o);
}

function attributes(list: unknown): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const a of (list ?? []) as Json[]) out[String(a.key)] = value(a.value);
  return out;
}

/** OTLP/JSON writes nanoseconds as a decimal string (or a number). */
const micros = (nanos: unknown) =>
  typeof nanos === 'string' || typeof nanos === 'number' ? Number(BigInt(nanos) / 1000n) : 0;

function spansOf(body: Json): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of (body.resourceSpans ?? []) as Json[]) {
    const resource = attributes((rs.resource as Json | undefined)?.attributes);
    for (const ss of (rs.scopeSpans ?? []) as Json[]) {
      for (const s of (ss.spans ?? []) as Json[]) {
        out.push({
          traceId: String(s.traceId),
          spanId: String(s.spanId),
          parentSpanId: typeof s.parentSpanId === 'string' ? s.parentSpanId : '',
          name: String(s.name),
          kind: Number(s.kind),
          startUs: micros(s.startTimeUnixNano),
          endUs: micros(s.endTimeUnixNano),
          links: ((s.links ?? []) as Json[]).map((l) => ({ traceId: String(l.traceId), spanId: String(l.spanId) })),
          attributes: attributes(s.attributes),
          status: s.status ?? {},
          events: ((s.events ?? []) as Json[]).map((e) => ({
            name: String(e.name),
            attributes: attributes(e.attributes),
          })),
          resource,
        });
      }
    }
  }
  return out;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private standin: StandinServer | undefined;

  async start(): Promise<string> {
    this.standin = await startStandin(async (req, res) => {
      const body = await readBody(req);
      if (req.url === '/v1/traces' && req.method === 'POST') {
        try {
          this.spans.push(...spansOf(JSON.parse(body.toString('utf8')) as Json));
        } catch {
          res.writeHead(400).end();
          return;
        }
      }
      replyJson(res, 200, {});
    });
    return this.standin.origin;
  }

  async stop(): Promise<void> {
    await this.standin?.close();
  }
}
