/**
 * The e-mails the infrastructure tasks send, at the moments Smarter sends its own (our wording): an LLMClient
 * deployed or not, a custom domain verified or given up on. Sending never fails a task: a deployment that worked
 * stays done when the mail server is down; the failure is logged and counted.
 */
import type { Counter } from 'prom-client';
import { promClient } from '../../lib/control/prom-client.js';
import { coerceError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { Mail, Mailer } from '../cloud/ports.js';

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

/** Sends one notification; returns whether it went out. */
export async function notify(mailer: Mailer, log: Logger, to: string[], mail: Omit<Mail, 'to'>, kind: string): Promise<boolean> {
  if (to.length === 0) {
    log.warn(`no contact to notify of ${kind}: ${mail.subject}`);
    return false;
  }
  try {
    await mailer.send({ ...mail, to });
    log.info(`notified ${to.join(', ')}: ${mail.subject}`);
    return true;
  } catch (err) {
    mailFailures.inc({ subject: kind });
    log.error(`could not send the ${kind} e-mail to ${to.join(', ')}: ${coerceError(err).message}`, { subject: mail.subject });
    return false;
  }
}

const html = (paragraphs: string[]) => paragraphs.map((p) => `<p>${p.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</p>`).join('\n');
const mail = (subject: string, paragraphs: string[]): Omit<Mail, 'to'> => ({ subject, text: paragraphs.join('\n\n'), html: html(paragraphs) });

export const MAIL = {
  deployed: (name: string, url: string) =>
    mail(`Your LLMClient ${name} is live at ${url}`, [
      `${name} is deployed at ${url}: its DNS record resolves and its TLS certificate is issued, so it answers prompts now.`,
      'If it also has a custom domain, a separate message will tell you when that domain is verified.',
    ]),
  deployFailed: (name: string, host: string, why: string) =>
    mail(`Your LLMClient ${name} could not be deployed`, [
      `We could not deploy ${name} at ${host}: ${why}`,
      'It stays available in the workbench. Deploying it again starts over.',
    ]),
  domainVerified: (domain: string) =>
    mail(`${domain} is verified`, [
      `${domain} is delegated to Smarter and its TLS certificate is issued.`,
      'Your LLMClients can now use it.',
    ]),
  domainFailed: (domain: string, why: string, attempts: number, hours: number) =>
    mail(`${domain} could not be verified`, [
      `We could not verify ${domain}: ${why}`,
      `We checked ${attempts} times over ${hours} hours. Once the records are in place, run smarter deploy again.`,
    ]),
};
