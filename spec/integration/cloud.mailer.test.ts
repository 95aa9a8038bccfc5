/**
 * The e-mail adapter (nodemailer) against a real SMTP server on loopback, configured with Smarter's SMTP_*
 * settings as the worker is.
 */
import { cloudFailure, testCloud } from '../support/cloud.js';
import { recordingLogger } from '../support/logs.js';
import { startSmtpServer, type SmtpStandIn } from '../support/smtp.js';

let smtp: SmtpStandIn;

beforeEach(async () => {
  smtp = await startSmtpServer();
});
afterEach(async () => smtp?.stop());

test('own wiring: a message is delivered with its recipients, subject, text and HTML, from SMTP_FROM_EMAIL, Bcc EMAIL_ADMIN', async () => {
  const { mailer } = testCloud({ ...smtp.env, EMAIL_ADMIN: 'admin@smarter.test' });
  await mailer.send({
    to: ['owner@example.com', 'ops@example.com'],
    subject: 'Your API is ready: api.example.com',
    text: 'Déployé.\nhttps://api.example.com/',
    html: '<p>Déployé.</p>',
  });
  expect(smtp.messages).toHaveLength(1);
  const [m] = smtp.messages;
  expect(m).toMatchObject({
    from: 'no-reply@platform.smarter.test',
    subject: 'Your API is ready: api.example.com',
    text: 'Déployé.\nhttps://api.example.com/',
    html: '<p>Déployé.</p>',
    user: 'smarter',
  });
  expect(m?.to.sort()).toEqual(['admin@smarter.test', 'ops@example.com', 'owner@example.com']);
  expect(m?.raw).not.toMatch(/^Bcc:/im);
});

test('own wiring: an SMTP server that is down is a CloudError smtp send Unavailable naming the server', async () => {
  const { mailer } = testCloud(smtp.env);
  await smtp.goDown();
  const err = await cloudFailure(mailer.send({ to: ['owner@example.com'], subject: 'x', text: 'y' }));
  expect(err).toMatchObject({ service: 'smtp', verb: 'send', resource: `127.0.0.1:${smtp.port}`, kind: 'Unavailable' });
  expect(err.message).toContain('ECONNREFUSED');
});

test('own wiring: a server that refuses the message (451) is a CloudError Unavailable; nothing is recorded', async () => {
  const { mailer } = testCloud(smtp.env);
  smtp.refuse(true);
  const err = await cloudFailure(mailer.send({ to: ['owner@example.com'], subject: 'x', text: 'y' }));
  expect(err).toMatchObject({ service: 'smtp', verb: 'send', kind: 'Unavailable' });
  expect(err.message).toContain('451');
  expect(smtp.messages).toHaveLength(0);
});

test('own wiring: wrong credentials are AccessDenied, and the password is never logged', async () => {
  const log = recordingLogger();
  const password = 'Wrong-Password-7c1f';
  const { mailer } = testCloud({ ...smtp.env, SMTP_PASSWORD: password }, log);
  const err = await cloudFailure(mailer.send({ to: ['owner@example.com'], subject: 'x', text: 'y' }));
  expect(err).toMatchObject({ service: 'smtp', kind: 'AccessDenied' });
  expect(err.message).not.toContain(password);
  expect(log.lines.some((l) => l.level === 'debug' && l.meta.service === 'smtp' && l.meta.verb === 'send')).toBe(true);
  expect(JSON.stringify(log.lines)).not.toContain(password);
});

test('own wiring: without SMTP credentials (as Smarter: not configured) nothing is sent, the answer is false, and an error names the mail', async () => {
  const log = recordingLogger();
  const { SMTP_USERNAME: _u, SMTP_PASSWORD: _p, ...unconfigured } = smtp.env;
  const { mailer } = testCloud(unconfigured, log);
  expect(await mailer.send({ to: ['owner@example.com'], subject: 'Deployed', text: 'y' })).toBe(false);
  expect(smtp.messages).toHaveLength(0);
  expect(log.lines.filter((l) => l.level === 'error').map((l) => l.meta.subject)).toEqual(['Deployed']);
});

// infrastructure/services/email.py, EmailService.admin_bcc: no copy to an admin who is a recipient, or not an address.
test.each([
  ['Admin@Smarter.test', ['owner@example.com', 'admin@smarter.test'], ['admin@smarter.test', 'owner@example.com']],
  ['not an address', ['owner@example.com'], ['owner@example.com']],
  ['', ['owner@example.com'], ['owner@example.com']],
])('own wiring: EMAIL_ADMIN %j, recipients %j: the envelope is %j', async (admin, to, envelope) => {
  const { mailer } = testCloud({ ...smtp.env, EMAIL_ADMIN: admin });
  expect(await mailer.send({ to, subject: 's', text: 't' })).toBe(true);
  expect(smtp.messages.map((m) => [...m.to].sort())).toEqual([envelope]);
});
