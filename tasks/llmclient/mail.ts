/**
 * The e-mails the LLMClient tasks send, as Smarter sends them: the same three moments (an LLMClient deployed, a
 * custom domain verified, a custom domain given up on), the same recipients, and Smarter's subjects and plain-text
 * bodies word for word. Smarter sends no e-mail when a deployment fails; its `llmclient_deploy_failed` receiver
 * only logs (`smarter/smarter/apps/llmclient/receivers.py`).
 *
 * Sending follows `AccountContact.send_email*` (`smarter/smarter/apps/account/models/account.py`) and
 * `EmailService.send_email` (`smarter/smarter/apps/infrastructure/services/email.py`): one message per contact, a
 * test contact (`is_test`) not mailed, invalid addresses dropped, and a failed send logged and answered false,
 * never raised, so that a deployment that worked stays done when the mail server is down.
 */
import type { Counter } from 'prom-client';
import { promClient } from '../../lib/control/prom-client.js';
import { coerceError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { Mailer } from '../cloud/mailer-port.js';
import { isValidEmail } from '../cloud/email-address.js';
import type { Queryable } from '../db/database.js';
import { type Contact, accountContacts, primaryContact } from './rows.js';

let failures: Counter<'subject'> | undefined;

/** Created on the first failure or read, so that loading the tasks does not load prom-client. */
function failureCounter(): Counter<'subject'> {
  return (failures ??= new (promClient().Counter)({
    name: 'smarter_worker_emails_failed_total',
    help: 'Notification e-mails the infrastructure tasks could not send',
    labelNames: ['subject'],
  }));
}

export const mailFailures = {
  inc: (labels: { subject: string }) => failureCounter().inc(labels),
  get: () => failureCounter().get(),
};

export interface Message {
  subject: string;
  body: string;
}

/** `EmailService.send_email(subject, body, to, quiet=…)`: whether the message went out; never throws. */
export async function sendEmail(
  mailer: Mailer,
  log: Logger,
  message: Message,
  to: string,
  o: { quiet: boolean; kind: string },
): Promise<boolean> {
  if (o.quiet) {
    log.debug(`quiet mode. Would have sent '${message.subject}' to: ${to}`);
    return false;
  }
  if (!isValidEmail(to)) {
    log.warn(`no valid email addresses found in send list: ${JSON.stringify(to)}`, { subject: message.subject });
    return false;
  }
  try {
    if (!(await mailer.send({ to: [to], subject: message.subject, text: message.body }))) return false;
  } catch (err) {
    mailFailures.inc({ subject: o.kind });
    log.error(`could not send '${message.subject}' to ${to}: ${coerceError(err).message}`, {
      subject: message.subject,
    });
    return false;
  }
  log.info(`sent '${message.subject}' to ${to}`);
  return true;
}

const sendTo = (mailer: Mailer, log: Logger, message: Message, contact: Contact, kind: string) =>
  sendEmail(mailer, log, message, contact.email, { quiet: contact.isTest, kind });

/** One message to an account's contacts, as `AccountContact`'s senders take it; `kind` labels the failures' metric. */
type SendToAccount = (
  db: Queryable,
  mailer: Mailer,
  log: Logger,
  accountId: number,
  message: Message,
  kind: string,
) => Promise<void>;

/** `AccountContact.send_email_to_primary_contact`: none found is logged at error level, as in Smarter. */
export const sendToPrimaryContact: SendToAccount = async (db, mailer, log, accountId, message, kind) => {
  const contact = await primaryContact(db, accountId);
  if (!contact) {
    log.error(`No primary contact found for account ${accountId}; '${message.subject}' not sent`);
    return;
  }
  await sendTo(mailer, log, message, contact, kind);
};

/** `AccountContact.send_email_to_account`: one message to each contact of the account, in turn. */
export const sendToAccount: SendToAccount = async (db, mailer, log, accountId, message, kind) => {
  for (const contact of await accountContacts(db, accountId)) await sendTo(mailer, log, message, contact, kind);
};

/** Smarter's `verify_custom_domain` writes "24 hours" whatever the interval between its checks. */
const VERIFICATION_HOURS = 24;

/** Subjects and bodies of `deploy_default_api.py` and `verify_custom_domain.py`, word for word. */
export const MAIL = {
  deployed: (name: string, url: string, support: string): Message => ({
    subject: `Your Smarter llmclient ${url} has been deployed`,
    body:
      `Your llmclient, ${name}, has been deployed to ${url}. It is now activated and able to respond to prompts.\n\n` +
      "If you also created a custom domain for your llmclient then you'll be separately notified once it has been verified. " +
      `If you have any questions, please contact us at ${support}.`,
  }),
  domainVerified: (domain: string, support: string): Message => ({
    subject: `Domain Verification for ${domain} Successful`,
    body:
      `Your domain ${domain} has been verified: its DNS is delegated to Smarter, and its TLS certificate is issued.\n\n` +
      'Your custom domain is now active and ready to use with your LLMClients.\n' +
      `If you have any questions, please contact us at ${support}.`,
  }),
  domainFailed: (domain: string, blocker: string, maxAttempts: number, support: string): Message => ({
    subject: `Domain Verification Failure for ${domain}`,
    body:
      `We were unable to verify your domain ${domain}: ${blocker}\n\n` +
      `We made ${maxAttempts} attempts over a period of ${VERIFICATION_HOURS} hours to verify the domain.\n` +
      `If you have any questions, please contact us at ${support}.`,
  }),
};
