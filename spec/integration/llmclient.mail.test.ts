/**
 * The LLMClient e-mails on a real SMTP server (smtp-server on loopback), sent through the real adapter, as Smarter
 * sends them: subjects and plain-text bodies of `deploy_default_api.py` and `verify_custom_domain.py`; recipients
 * as `AccountContact.send_email_to_primary_contact` / `send_email_to_account` (`account/models/account.py`): one
 * message per contact, `is_test` contacts not mailed; the admin's blind copy and a failed send as
 * `EmailService.send_email` (`infrastructure/services/email.py`). Route 53, ACM, Kubernetes and DNS are the
 * in-memory FakeCloud: only the mail is real here.
 */
import { CloudError } from '../../tasks/cloud/errors.js';
import type { Mailer } from '../../tasks/cloud/mailer-port.js';
import { defaultHost } from '../../tasks/llmclient/hosts.js';
import { llmclientTasks } from '../../tasks/llmclient/index.js';
import { MAIL, sendEmail, sendToAccount } from '../../tasks/llmclient/mail.js';
import { deployDefaultApi } from '../../tasks/llmclient/deploy-default-api.js';
import { verifyCustomDomain } from '../../tasks/llmclient/verify-custom-domain.js';
import { findLlmclient } from '../../tasks/llmclient/rows.js';
import { hashedId } from '../../tasks/llmclient/url.js';
import { type SmarterDeps, taskEnv } from '../../tasks/env/task-env.js';
import { CheckRunner } from '../support/check-runner.js';
import { testCloud } from '../support/cloud.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';
import { FakeCloud } from '../support/fake-cloud.js';
import { recordingLogger } from '../support/logs.js';
import { type ReceivedMail, type SmtpStandIn, startSmtpServer } from '../support/smtp.js';
import { nameOf } from '../support/task-names.js';
import { alphaSettings } from '../support/alpha-settings.js';

const LB = ['192.0.2.10'];
const ADMIN = 'admin@smarter.test';
const SUPPORT = 'lpm0073@gmail.com';
const env = taskEnv(alphaSettings());
const tasks = llmclientTasks(env);
// Derived as Smarter's settings derive them (`<env>.api.<platform subdomain>.<root>`).
const API = env.llmclientApiDomain;
const NS = env.namespace;

let t: TestDatabase;
let smtp: SmtpStandIn;
let mailer: Mailer;
let ids: Awaited<ReturnType<typeof seed>>;
let fake: FakeCloud;
let runner: CheckRunner<SmarterDeps>;

beforeAll(async () => {
  t = await createTestDatabase('llc_mail');
  smtp = await startSmtpServer();
  mailer = testCloud({ ...smtp.env, EMAIL_ADMIN: ADMIN, SMARTER_WORKER_SMTP_TIMEOUT: '3' }).mailer;
});
afterAll(async () => {
  await smtp?.stop();
  await t?.drop();
});

beforeEach(async () => {
  ids = await seed(t.db);
  smtp.messages.splice(0);
  smtp.refuse(false);
  fake = new FakeCloud();
  const apiZone = fake.addZone(API);
  fake.setRecord(apiZone.id, { name: API, type: 'A', ttl: 300, values: LB });
  runner = new CheckRunner(tasks, { db: t.db, cloud: { ...fake.deps, mailer } });
});

const contact = (email: string, o: { primary?: boolean; test?: boolean } = {}) =>
  t.db.execute(
    'INSERT INTO account_accountcontact (first_name, last_name, email, phone, is_primary, welcomed, is_test, account_id, created_at, updated_at) VALUES (?, ?, ?, NULL, ?, 1, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))',
    ['First', 'Last', email, o.primary ? 1 : 0, o.test ? 1 : 0, ids.accountId],
  );
const mail = (local: string) => `${local}${ids.accountId}@example.org`;
/** The message's `To:` header: the envelope (`ReceivedMail.to`) also holds the blind copies. */
const toHeader = (m: ReceivedMail) => /^To: (.*)$/im.exec(m.raw)?.[1]?.trim();
const host = async () => defaultHost((await findLlmclient(t.db, ids.llmclientId))!, API);

/** deploy_default_api, then continue_default_api_deployment until deployed: cert-manager and DNS answer at once. */
async function deploy(kwargs: Record<string, unknown> = {}): Promise<void> {
  const h = await host();
  fake.issueTls(h, NS);
  fake.answer(h, 'A', { status: 'found', values: LB });
  runner.send(nameOf(deployDefaultApi), { llmclient_id: ids.llmclientId, ...kwargs });
  const runs = await runner.drain();
  expect(runs.map((r) => r.error)).toEqual(runs.map(() => undefined));
}

describe('own wiring: deployed (deploy_default_api.py: AccountContact.send_email_to_primary_contact)', () => {
  test("one message, to the primary contact only, with Smarter's subject and plain-text body; the admin's copy in the envelope only", async () => {
    await contact(mail('ada'), { primary: true });
    await contact(mail('bob'));
    await deploy();
    const url = `https://${await host()}/`;
    expect(smtp.messages).toHaveLength(1);
    const [m] = smtp.messages;
    expect(toHeader(m!)).toBe(mail('ada'));
    expect(m?.to.sort()).toEqual([ADMIN, mail('ada')].sort());
    expect(m?.raw).not.toMatch(/^Bcc:/im);
    expect(m?.html).toBeUndefined();
    expect(m?.subject).toBe(`Your Smarter llmclient ${url} has been deployed`);
    expect(m?.text).toBe(
      `Your llmclient, ${(await findLlmclient(t.db, ids.llmclientId))?.name}, has been deployed to ${url}. It is now activated and able to respond to prompts.\n\n` +
        "If you also created a custom domain for your llmclient then you'll be separately notified once it has been verified. " +
        `If you have any questions, please contact us at ${SUPPORT}.`,
    );
  });

  test('an LLMClient never deployed, deployed without domain verification: the URL is its workbench URL, as LLMClient.url gives it', async () => {
    await contact(mail('ada'), { primary: true });
    await deploy({ with_domain_verification: false });
    const url = `https://alpha.platform.example.com/workbench/llm-clients/${hashedId(ids.llmclientId)}/`;
    expect(smtp.messages.map((m) => m.subject)).toEqual([`Your Smarter llmclient ${url} has been deployed`]);
    expect(hashedId(39)).toBe('rMTAwMDAzOQx');
  });

  test('a test primary contact is not mailed; an account without a primary contact: nothing sent, logged at error', async () => {
    await contact(mail('tess'), { primary: true, test: true });
    await contact(mail('bob'));
    await deploy();
    expect(smtp.messages).toEqual([]);

    await t.db.execute('DELETE FROM account_accountcontact WHERE account_id = ?', [ids.accountId]);
    await t.db.execute(
      "UPDATE llmclient_llmclient SET deployed = 0, dns_verification_status = 'Not Verified' WHERE id = ?",
      [ids.llmclientId],
    );
    const logger = recordingLogger();
    runner = new CheckRunner(tasks, { db: t.db, cloud: { ...fake.deps, mailer } }, logger);
    await deploy();
    expect(smtp.messages).toEqual([]);
    expect(logger.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      expect.stringMatching(new RegExp(`^No primary contact found for account ${ids.accountId}`)),
    ]);
  });

  test('a send the server refuses is logged at error and lost, never raised: the deployment completes', async () => {
    await contact(mail('ada'), { primary: true });
    smtp.refuse(true);
    const logger = recordingLogger();
    runner = new CheckRunner(tasks, { db: t.db, cloud: { ...fake.deps, mailer } }, logger);
    await deploy();
    expect(smtp.messages).toEqual([]);
    expect(
      (
        await t.db.select('SELECT deployed, dns_verification_status AS dns FROM llmclient_llmclient WHERE id = ?', [
          ids.llmclientId,
        ])
      )[0],
    ).toEqual({ deployed: 1, dns: 'Verified' });
    expect(logger.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      expect.stringMatching(
        new RegExp(`^could not send 'Your Smarter llmclient .* has been deployed' to ${mail('ada')}: smtp send .*451`),
      ),
    ]);
  });
});

describe('own wiring: custom domain (verify_custom_domain.py: AccountContact.send_email_to_account)', () => {
  const domain = () => `bots${ids.accountId}.example.net`;

  async function customDomain(): Promise<{ zoneId: string; nameServers: string[] }> {
    const zone = fake.addZone(domain());
    await t.db.execute(
      "INSERT INTO llmclient_llmclientcustomdomain (aws_hosted_zone_id, domain_name, name, description, version, annotations, user_profile_id, verification_status, verification_message, created_at, updated_at) VALUES (?, ?, 'd', '', '1.0.0', '[]', ?, 'Not Verified', '', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
      [zone.id, domain(), ids.profileId],
    );
    return { zoneId: zone.id, nameServers: zone.nameServers };
  }

  test('verified: one message per contact, a test contact skipped, an invalid address dropped; no admin copy on the message the admin receives', async () => {
    await contact(mail('ada'), { primary: true });
    await contact(mail('bob'));
    await contact(mail('tess'), { test: true });
    await contact(ADMIN);
    await contact('not-an-address');
    const zone = await customDomain();
    fake.answer(domain(), 'NS', { status: 'found', values: [`${zone.nameServers[0]}.`] });
    fake.certificates.push({
      arn: `arn:aws:acm:us-east-1:123456789012:certificate/${ids.accountId}`,
      domain: domain(),
      status: 'ISSUED',
      validationRecords: [],
    });
    runner.send(nameOf(verifyCustomDomain), { hosted_zone_id: zone.zoneId });
    const [run] = await runner.drain();
    expect(run?.result).toBe(true);
    expect(smtp.messages.map((m) => [toHeader(m), [...m.to].sort()])).toEqual([
      [mail('ada'), [ADMIN, mail('ada')].sort()],
      [mail('bob'), [ADMIN, mail('bob')].sort()],
      [ADMIN, [ADMIN]],
    ]);
    for (const m of smtp.messages) {
      expect(m.subject).toBe(`Domain Verification for ${domain()} Successful`);
      expect(m.text).toBe(
        `Your domain ${domain()} has been verified: its DNS is delegated to Smarter, and its TLS certificate is issued.\n\n` +
          'Your custom domain is now active and ready to use with your LLMClients.\n' +
          `If you have any questions, please contact us at ${SUPPORT}.`,
      );
    }
  });

  test('given up: Smarter\'s subject and body, with the blocker, the attempts and "24 hours" whatever the interval', async () => {
    await contact(mail('ada'), { primary: true });
    const zone = await customDomain();
    runner.send(nameOf(verifyCustomDomain), { hosted_zone_id: zone.zoneId, sleep_interval: 60, max_attempts: 2 });
    const runs = await runner.drain();
    expect(runs.at(-1)?.result).toBe(false);
    const [row] = await t.db.select(
      'SELECT verification_status, verification_message FROM llmclient_llmclientcustomdomain WHERE aws_hosted_zone_id = ?',
      [zone.zoneId],
    );
    expect(row?.verification_status).toBe('Failed');
    expect(smtp.messages).toHaveLength(1);
    expect(smtp.messages[0]?.subject).toBe(`Domain Verification Failure for ${domain()}`);
    expect(smtp.messages[0]?.text).toBe(
      `We were unable to verify your domain ${domain()}: ${String(row?.verification_message)}\n\n` +
        'We made 2 attempts over a period of 24 hours to verify the domain.\n' +
        `If you have any questions, please contact us at ${SUPPORT}.`,
    );
  });
});

describe('own wiring: sending (EmailService.send_email)', () => {
  test('true once sent; false, never a throw, for a test contact, an invalid address, a refusal, a server that is down', async () => {
    const log = recordingLogger();
    const m = MAIL.domainVerified('example.net', SUPPORT);
    expect(await sendEmail(mailer, log, m, 'owner@example.org', { quiet: false, kind: 'k' })).toBe(true);
    expect(await sendEmail(mailer, log, m, 'owner@example.org', { quiet: true, kind: 'k' })).toBe(false);
    expect(await sendEmail(mailer, log, m, 'owner@localhost', { quiet: false, kind: 'k' })).toBe(false);
    smtp.refuse(true);
    expect(await sendEmail(mailer, log, m, 'owner@example.org', { quiet: false, kind: 'k' })).toBe(false);
    const down = await startSmtpServer();
    await down.goDown();
    const unreachable = testCloud({ ...down.env, SMARTER_WORKER_SMTP_TIMEOUT: '3' }).mailer;
    expect(await sendEmail(unreachable, log, m, 'owner@example.org', { quiet: false, kind: 'k' })).toBe(false);
    expect(smtp.messages.map((x) => x.to.filter((a) => a !== ADMIN))).toEqual([['owner@example.org']]);
    expect(log.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      expect.stringMatching(
        /^could not send 'Domain Verification for example.net Successful' to owner@example.org: smtp send .*451/,
      ),
      expect.stringMatching(/^could not send .* to owner@example.org: smtp send .*ECONNREFUSED/),
    ]);
  });

  test("SMTP not configured: nothing sent, false, and an error naming the mail (as Smarter's SMTPEmailService)", async () => {
    const log = recordingLogger();
    const { SMTP_PASSWORD: _p, ...unconfigured } = smtp.env;
    const { mailer: m } = testCloud(unconfigured, log);
    await contact(mail('ada'), { primary: true });
    await sendToAccount(t.db, m, log, ids.accountId, MAIL.domainVerified('example.net', SUPPORT), 'k');
    expect(smtp.messages).toEqual([]);
    expect(log.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      `[EMAIL NOT SENT] SMTP is not configured, so 'Domain Verification for example.net Successful' was not sent to: ${mail('ada')}. To send email, set SMTP_HOST, SMTP_PORT, SMTP_USERNAME, SMTP_PASSWORD and SMTP_FROM_EMAIL (or SMARTER_SMTP_*).`,
    ]);
  });

  test('a CloudError from the adapter is counted and logged, not raised', async () => {
    const log = recordingLogger();
    const failing: Mailer = {
      send: () =>
        Promise.reject(
          new CloudError('smtp', 'send', 'mail', 'AccessDenied', '535 5.7.8 Authentication credentials invalid'),
        ),
    };
    expect(
      await sendEmail(failing, log, MAIL.deployed('bot', 'https://bot.example/', SUPPORT), 'owner@example.org', {
        quiet: false,
        kind: 'deployed',
      }),
    ).toBe(false);
    expect(log.lines.map((l) => l.level)).toEqual(['error']);
  });
});
