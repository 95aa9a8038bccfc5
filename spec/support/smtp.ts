/**
 * A real SMTP server on loopback (smtp-server) that records each message it accepts:
 *
 *   const smtp = await startSmtpServer();     // AUTH required, with smtp.env's credentials; null: no AUTH
 *   ... SMTP_HOST=127.0.0.1 SMTP_PORT=smtp.port SMTP_USE_TLS=False ...
 *   smtp.messages[0].to / .subject / .text
 *   smtp.refuse(true);       // every MAIL FROM is answered 451 (a server that is up but refuses)
 *   await smtp.goDown();     // stops listening: the next connection is refused
 *
 * No TLS: the tests speak plain SMTP (SMTP_USE_TLS=False), with AUTH PLAIN/LOGIN allowed in the clear when
 * credentials are given.
 */
import type net from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  /** Envelope recipients (RCPT TO), which include Bcc. */
  to: string[];
  subject: string;
  /** The text/plain part, decoded. */
  text: string;
  /** The text/html part, decoded, when there is one. */
  html?: string;
  /** The user that authenticated, if any. */
  user?: string;
  raw: string;
}

export interface SmtpStandIn {
  host: string;
  port: number;
  /** The environment Smarter's SMTP settings take to reach this server. */
  env: Record<string, string>;
  readonly messages: ReceivedMail[];
  /** While on, MAIL FROM is answered `451 4.3.0 refused by the stand-in`. */
  refuse(on: boolean): void;
  /** Stops listening and drops open connections (the server is down). */
  goDown(): Promise<void>;
  stop(): Promise<void>;
}

/** Smarter sends only with a user and password set, so by default the stand-in asks for these. */
export const STAND_IN_CREDENTIALS = { user: 'smarter', pass: 'stand-in-password' };

export async function startSmtpServer(
  auth: { user: string; pass: string } | null = STAND_IN_CREDENTIALS,
): Promise<SmtpStandIn> {
  const messages: ReceivedMail[] = [];
  let refusing = false;
  const server = new SMTPServer({
    secure: false,
    disabledCommands: auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !auth,
    allowInsecureAuth: true,
    logger: false,
    onAuth(a, _session, callback) {
      if (auth && a.username === auth.user && a.password === auth.pass) callback(null, { user: a.username });
      else callback(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
    },
    onMailFrom(_address, _session, callback) {
      if (refusing) callback(Object.assign(new Error('4.3.0 refused by the stand-in'), { responseCode: 451 }));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const parsed = parseMessage(raw);
        const from = session.envelope.mailFrom;
        messages.push({
          from: from ? from.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          ...parsed,
          ...(typeof session.user === 'string' ? { user: session.user } : {}),
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as net.AddressInfo;
  let down = false;
  const goDown = () =>
    new Promise<void>((resolve) => {
      if (down) return resolve();
      down = true;
      server.close(() => resolve());
      // smtp-server waits for open connections to end; a down server does not.
      for (const c of (server as unknown as { connections: Set<{ close(): void }> }).connections ?? []) c.close();
    });
  return {
    host: '127.0.0.1',
    port,
    env: {
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(port),
      SMTP_USE_TLS: 'False',
      SMTP_USE_SSL: 'False',
      SMTP_FROM_EMAIL: 'no-reply@platform.smarter.test',
      ...(auth ? { SMTP_USERNAME: auth.user, SMTP_PASSWORD: auth.pass } : {}),
    },
    messages,
    refuse(on) {
      refusing = on;
    },
    goDown,
    stop: goDown,
  };
}

/** Just enough MIME for nodemailer's output: headers, RFC 2047 subjects, multipart, quoted-printable, base64. */
export function parseMessage(raw: string): { subject: string; text: string; html?: string } {
  const { headers, body } = splitHeaders(raw);
  const subject = decodeWords(headers.get('subject') ?? '');
  const parts = leafParts(headers, body);
  const text = parts.find((p) => p.type.startsWith('text/plain'))?.body ?? '';
  const html = parts.find((p) => p.type.startsWith('text/html'))?.body;
  return { subject, text, ...(html === undefined ? {} : { html }) };
}

function splitHeaders(raw: string): { headers: Map<string, string>; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  const head = at < 0 ? raw : raw.slice(0, at);
  const body = at < 0 ? '' : raw.slice(at).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return { headers, body };
}

function leafParts(headers: Map<string, string>, body: string): Array<{ type: string; body: string }> {
  const type = (headers.get('content-type') ?? 'text/plain').toLowerCase();
  const boundary = /boundary="?([^";]+)"?/i.exec(headers.get('content-type') ?? '')?.[1];
  if (type.startsWith('multipart/') && boundary) {
    return body
      .split(`--${boundary}`)
      .slice(1)
      .filter((p) => !p.startsWith('--'))
      .flatMap((p) => {
        const inner = splitHeaders(p.replace(/^\r?\n/, ''));
        return leafParts(inner.headers, inner.body);
      });
  }
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  let decoded = body.replace(/\r?\n$/, '');
  if (encoding === 'base64') decoded = Buffer.from(decoded.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') decoded = decodeQuotedPrintable(decoded);
  return [{ type, body: decoded.replace(/\r\n/g, '\n') }];
}

function decodeQuotedPrintable(s: string): string {
  const joined = s.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const hex = joined[i] === '=' ? /^[0-9A-F]{2}$/i.exec(joined.slice(i + 1, i + 3))?.[0] : undefined;
    if (hex) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(joined[i] ?? '', 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeWords(s: string): string {
  return s.replace(/=\?([^?]+)\?([BQ])\?([^?]*)\?=\s*/gi, (_m, _charset: string, enc: string, text: string) =>
    enc.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : decodeQuotedPrintable(text.replace(/_/g, ' ')),
  );
}
