/**
 * E-mail through nodemailer over SMTP with Smarter's SMTP settings, as Smarter's `SMTPEmailService` sends it
 * (`smarter/smarter/apps/infrastructure/services/email.py`): only when SMTP is configured (host, port, user,
 * password and from address all set; otherwise the message is logged and skipped, so a worker without SMTP runs
 * its tasks all the same), with the admin's blind copy in the envelope only. A send that fails is a
 * CloudError('smtp', 'send', …): the caller decides whether a lost e-mail fails its task (Smarter's never do).
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '../../lib/logger.js';
import { tracing } from '../../lib/tracing/tracing.js';
import { cloudCall, isNetworkError, messageOf } from './call.js';
import { adminBcc } from './email-address.js';
import { CloudError, type CloudErrorKind } from './errors.js';
import type { Mail, Mailer } from './mailer-port.js';

export interface SmtpOptions {
  host: string;
  port: number;
  useSsl: boolean;
  useTls: boolean;
  username: string;
  password: string;
  from: string;
  /** Blind copy of every message (Smarter's EMAIL_ADMIN), or ''; see `adminBcc`. */
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

  async send(mail: Mail): Promise<boolean> {
    const o = this.options;
    const resource = `${o.host}:${o.port}`;
    if (!smtpConfigured(o)) {
      // Smarter logs this at error level, for each e-mail, with how to configure SMTP.
      this.logger.error(
        `[EMAIL NOT SENT] SMTP is not configured, so '${mail.subject}' was not sent to: ${mail.to.join(', ')}. ` +
          'To send email, set SMTP_HOST, SMTP_PORT, SMTP_USERNAME, SMTP_PASSWORD and SMTP_FROM_EMAIL (or SMARTER_SMTP_*).',
        { subject: mail.subject, to: mail.to },
      );
      return false;
    }
    const bcc = adminBcc(o.bcc, mail.to);
    await cloudCall(
      this.logger,
      'smtp',
      'send',
      resource,
      (err) =>
        new CloudError(
          'smtp',
          'send',
          resource,
          kindOfSmtpError(err),
          `mail "${mail.subject}" to ${mail.to.length} recipient(s): ${messageOf(err)}`,
          { cause: err },
        ),
      async () => {
        const sendMail = () =>
          this.transporter().sendMail({
            from: o.from,
            to: mail.to,
            ...(bcc.length > 0 ? { bcc } : {}),
            subject: mail.subject,
            text: mail.text,
            ...(mail.html === undefined ? {} : { html: mail.html }),
          });
        // No maintained OpenTelemetry instrumentation covers nodemailer or SMTP: with tracing on, a span of our own.
        const traced = tracing();
        await (traced
          ? traced.client(
              'smtp send',
              { 'server.address': o.host, 'server.port': o.port, 'network.protocol.name': 'smtp' },
              sendMail,
            )
          : sendMail());
      },
    );
    return true;
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
