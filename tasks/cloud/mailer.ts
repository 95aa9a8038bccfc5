/**
 * E-mail through nodemailer over SMTP with Smarter's SMTP settings. As Smarter's EmailHelper does, mail is
 * sent only when SMTP is configured (host, port, user, password and from address all set); otherwise the
 * message is logged and skipped, so a worker without SMTP runs its tasks all the same. A send that fails is a
 * CloudError('smtp', 'send', …): the caller decides whether a lost e-mail fails its task (Smarter's do not).
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '../../lib/logger.js';
import { cloudCall, isNetworkError, messageOf } from './call.js';
import { CloudError, type CloudErrorKind, type Mail, type Mailer } from './ports.js';

export interface SmtpOptions {
  host: string;
  port: number;
  useSsl: boolean;
  useTls: boolean;
  username: string;
  password: string;
  from: string;
  /** Blind copy of every message (Smarter's EMAIL_ADMIN), or ''. */
  bcc: string;
  timeoutSeconds: number;
}

export function smtpConfigured(o: SmtpOptions): boolean {
  return [o.host, o.username, o.password, o.from].every((v) => v !== '') && o.port > 0;
}

function kindOfSmtpError(err: unknown): CloudErrorKind {
  const code = (err as { code?: unknown } | null)?.code;
  const response = (err as { responseCode?: unknown } | null)?.responseCode;
  if (code === 'EAUTH' || response === 535 || response === 530) return 'AccessDenied';
  if (typeof response === 'number' && response >= 500) return 'Invalid';
  if (typeof response === 'number' && response >= 400) return 'Unavailable';
  if (code === 'EENVELOPE' || code === 'EMESSAGE') return 'Invalid';
  if (isNetworkError(err) || code === 'ETIMEDOUT' || code === 'ETLS') return 'Unavailable';
  return 'Unavailable';
}

export class SmtpMailer implements Mailer {
  private transport: Transporter | undefined;

  constructor(
    private readonly options: SmtpOptions,
    private readonly logger: Logger,
  ) {}

  async send(mail: Mail): Promise<void> {
    const o = this.options;
    const resource = `${o.host}:${o.port}`;
    if (!smtpConfigured(o)) {
      this.logger.warn('SMTP is not configured; e-mail not sent', { subject: mail.subject, to: mail.to });
      return;
    }
    await cloudCall(
      this.logger,
      'smtp',
      'send',
      resource,
      (err) => new CloudError('smtp', 'send', resource, kindOfSmtpError(err), `mail "${mail.subject}" to ${mail.to.length} recipient(s): ${messageOf(err)}`, { cause: err }),
      async () => {
        await this.transporter().sendMail({
          from: o.from,
          to: mail.to,
          ...(o.bcc ? { bcc: o.bcc } : {}),
          subject: mail.subject,
          text: mail.text,
          ...(mail.html === undefined ? {} : { html: mail.html }),
        });
      },
    );
  }

  close(): void {
    this.transport?.close();
  }

  private transporter(): Transporter {
    const o = this.options;
    const ms = Math.round(o.timeoutSeconds * 1000);
    return (this.transport ??= nodemailer.createTransport({
      host: o.host,
      port: o.port,
      secure: o.useSsl,
      // SMTP_USE_TLS is STARTTLS, required when on; off means plain SMTP even if the server offers TLS.
      requireTLS: o.useTls && !o.useSsl,
      ignoreTLS: !o.useTls && !o.useSsl,
      auth: { user: o.username, pass: o.password },
      connectionTimeout: ms,
      greetingTimeout: ms,
      socketTimeout: ms,
    }));
  }
}
