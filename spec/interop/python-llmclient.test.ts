/**
 * ADR-030 end to end: Debian's Python Celery (protocol 1) calls `deploy_default_api.delay(llmclient_id=…)` and
 * `register_custom_domain.delay(…)`; our infrastructure worker runs the deployment through its certificate and
 * domain stages as the outside world becomes ready, rescheduling through the broker with the time scale at 0.01,
 * while our operational worker (another queue, as ADR-030 deploys them) completes 1,000 create_charge.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { SmarterDeps } from '../../tasks/env/task-env.js';
import { AMQP_URL, REDIS_URL, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type TestDatabase, createTestDatabase, untilRow } from '../support/db.js';
import type { Harness } from '../support/harness.js';
import { type World, startWorld } from '../support/infra-world.js';
import { alphaSettings } from '../support/alpha-settings.js';
import { llmclientState, newLlmclient as newSmarterLlmclient } from '../support/smarter-db.js';
import { type SmarterWorkers, startSmarterWorkers } from '../support/smarter-harness.js';
import { pythonJson } from '../support/python-script.js';

const exec = promisify(execFile);
const API = 'alpha.api.platform.example.com';
const NS = 'example-platform-alpha';

let t: TestDatabase;
let world: World;
let workers: SmarterWorkers;

async function python(mode: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const args = [AMQP_URL, REDIS_URL, workers.infra.queue, workers.op.queue, mode, JSON.stringify(params)];
  return (await pythonJson('spec/interop/python/infra_client.py', args)) as Record<string, unknown>;
}

async function unacked(queue: string): Promise<number> {
  const { stdout } = await exec('rabbitmqctl', ['list_queues', '-q', 'name', 'messages_unacknowledged']);
  const line = stdout.split('\n').find((l) => l.split('\t')[0] === queue);
  return Number(line?.split('\t')[1] ?? 0);
}

const idle = (h: Harness) => h.worker.active.size === 0 && h.worker.heldCount === 0 && h.worker.reservedCount === 0;

beforeAll(async () => {
  t = await createTestDatabase('e2e_infra');
  // ACM issues a requested certificate 27 s later: after the second custom-domain check (18 s), before the third.
  world = await startWorld({ apiDomain: API, namespace: NS, acmValidationWait: 27 });
  const infraQueue = uniqueName('infra');
  const opQueue = uniqueName('op');
  const settings = {
    ...alphaSettings({ operationalQueue: opQueue, infrastructureQueue: infraQueue }),
    checkTimeScale: 0.01,
  };
  const deps: SmarterDeps = { db: t.db, cloud: world.cloud };
  workers = await startSmarterWorkers(settings, deps, {
    infra: { CELERY_RESULT_BACKEND: REDIS_URL },
    op: { CELERY_WORKER_CONCURRENCY: '16' },
  });
}, 120_000);

afterAll(async () => {
  await workers?.stop();
  await world?.stop();
  await t?.drop();
});

const newLlmclient = () => newSmarterLlmclient(t.db, API);

const row = (id: number) => llmclientState(t.db, id);

test('own wiring: deploy_default_api from Python: certificate then domain stages, deployed and Verified, one success e-mail; meanwhile the infrastructure worker holds nothing and 1,000 charges complete', async () => {
  const l = await newLlmclient();
  await python('deploy', { llmclient_id: l.id });
  // The first certificate check is 600 s × 0.01 = 6 s away, parked in the broker.
  await waitFor(async () => (await row(l.id))?.tls === 'Requested', 20_000);
  // The continuation was parked before this moment, so it is due before `due`: the samples stop short of it, so
  // that the check's own run (which holds a slot while it works, as it should) is not mistaken for waiting.
  const due = Date.now() + 6000;
  const locator = uniqueName('charge');
  await python('charges', { n: 1000, locator });
  const samples: boolean[] = [];
  let brokerUnacked = -1;
  while (world.certificateChecks(l.host) === 0 && Date.now() < due - 500) {
    samples.push(idle(workers.infra));
    if (brokerUnacked < 0 && idle(workers.infra)) brokerUnacked = await unacked(workers.infra.queue);
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(samples.length).toBeGreaterThan(5);
  expect(samples.every(Boolean)).toBe(true);
  expect(brokerUnacked).toBe(0);
  await waitFor(
    async () =>
      Number(
        (await t.db.select('SELECT COUNT(*) AS n FROM account_charge WHERE resource_locator = ?', [locator]))[0]?.n,
      ) === 1000,
    60_000,
    200,
  );

  await waitFor(() => world.certificateChecks(l.host) >= 2, 30_000);
  world.issueTls(l.host);
  await waitFor(() => world.domainChecks(l.host) >= 1, 30_000);
  expect((await row(l.id))?.dns).toBe('Verifying');
  world.resolve(l.host);
  await waitFor(async () => (await row(l.id))?.dns === 'Verified', 30_000);
  expect(await row(l.id)).toEqual({ deployed: 1, dns: 'Verified', tls: 'Issued' });
  await waitFor(() => world.mails().length >= 1, 10_000);
  expect(
    world
      .mails()
      .filter((m) => m.to.includes(l.contact))
      .map((m) => m.subject),
  ).toEqual([`Your Smarter llmclient https://${l.host}/ has been deployed`]);
  expect(await world.aRecord(l.host)).toEqual(world.loadBalancer);
}, 120_000);

// smarter/smarter/apps/llmclient/models/llmclient.py: `rfc1034_compliant_name` is `<name>-<username>` for an
// LLMClient its account's admin does not own (smarter/smarter/common/utils/rfc1034_compliance.py sanitises it).
/** A member's LLMClient: its host is `<name>-<username>.<account>.<API domain>`. */
async function memberDeployment(): Promise<void> {
  const l = await newLlmclient();
  const username = `Jane_Doe.${l.accountId}`;
  const u = await t.db.execute('INSERT INTO auth_user (username, is_staff) VALUES (?, 0)', [username]);
  const p = await t.db.execute(
    'INSERT INTO account_userprofile (user_id, account_id, created_at, updated_at) VALUES (?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))',
    [u.insertId, l.accountId],
  );
  await t.db.execute('UPDATE llmclient_llmclient SET user_profile_id = ? WHERE id = ?', [p.insertId, l.id]);
  const memberHost = `bot${l.id}-jane-doe${l.accountId}.${l.accountNumber}.${API}`;
  await python('deploy', { llmclient_id: l.id });
  // The Ingress of the member's host is applied; cert-manager and public DNS are ready before the first check, 6 s later.
  await waitFor(async () => (await row(l.id))?.tls === 'Requested', 20_000);
  expect(world.ingress(memberHost)).toBe(true);
  world.issueTls(memberHost);
  world.resolve(memberHost);
  await waitFor(async () => (await row(l.id))?.dns === 'Verified', 30_000, 200);
  expect(await row(l.id)).toEqual({ deployed: 1, dns: 'Verified', tls: 'Issued' });
  expect(await world.aRecord(memberHost)).toEqual(world.loadBalancer);
  expect(await world.aRecord(l.host)).toEqual([]);
}

/** A certificate that never becomes Ready: TLS Failed after exactly 30 checks, and no e-mail. */
async function neverReady(): Promise<void> {
  const l = await newLlmclient();
  await python('deploy', { llmclient_id: l.id });
  await waitFor(async () => (await row(l.id))?.tls === 'Failed', 60_000, 200);
  await new Promise((r) => setTimeout(r, 1500));
  expect(world.certificateChecks(l.host)).toBe(30);
  expect(await row(l.id)).toMatchObject({ deployed: 0, tls: 'Failed' });
  expect(world.mails().filter((m) => m.to.includes(l.contact))).toEqual([]);
}

/** register_custom_domain → verify_custom_domain → deploy_custom_api, as the delegation and the certificate appear. */
async function customDomain(): Promise<void> {
  const l = await newLlmclient();
  const domain = `bots${l.accountId}.example.net`;
  await t.db.execute(
    "UPDATE llmclient_llmclient SET deployed = 1, dns_verification_status = 'Verified', tls_certificate_issuance_status = 'Issued' WHERE id = ?",
    [l.id],
  );
  await python('register', { account_id: l.accountId, domain_name: domain });
  const cd = await untilRow(
    t.db,
    'SELECT id, aws_hosted_zone_id, verification_status, verification_message FROM llmclient_llmclientcustomdomain WHERE domain_name = ?',
    [domain],
    20_000,
  );
  await t.db.execute('UPDATE llmclient_llmclient SET custom_domain_id = ? WHERE id = ?', [cd.id, l.id]);
  const message = async () =>
    String(
      (await t.db.select('SELECT verification_message FROM llmclient_llmclientcustomdomain WHERE id = ?', [cd.id]))[0]
        ?.verification_message,
    );
  await waitFor(async () => /not delegated/.test(await message()), 20_000);
  await world.delegate(domain, String(cd.aws_hosted_zone_id));
  // Delegated: the next check finds the certificate (requested at registration) not issued yet.
  await waitFor(
    async () => /TLS certificate .* is not issued yet\. Its status is PENDING_VALIDATION/.test(await message()),
    30_000,
  );
  await untilRow(
    t.db,
    "SELECT 1 FROM llmclient_llmclientcustomdomain WHERE id = ? AND verification_status = 'Verified' AND verified_at IS NOT NULL",
    [cd.id],
    60_000,
    200,
  );
  const custom = `bot${l.id}.${domain}`;
  await waitFor(async () => (await world.aRecord(custom, String(cd.aws_hosted_zone_id))).length > 0, 20_000);
  // deploy_custom_api.py writes the A record first and the Ingress after it: wait for the second write too.
  await waitFor(() => world.ingress(custom), 10_000);
  const subject = `Domain Verification for ${domain} Successful`;
  await waitFor(() => world.mails().some((m) => m.subject === subject), 10_000);
  expect(
    world
      .mails()
      .filter((m) => m.subject === subject)
      .map((m) => m.to),
  ).toEqual([[l.contact]]);
}

// The first test samples the infrastructure worker idle, so it runs alone; these three only wait on the broker's
// delay levels (the longest, the custom domain's 18 s checks against ACM's 27 s, ~40 s), on hosts and e-mail
// addresses of their own: they run side by side from here, and each test awaits its own.
describe('own wiring: three deployments from Python side by side on the same workers', () => {
  let member: Promise<void>;
  let failing: Promise<void>;
  let custom: Promise<void>;
  beforeAll(() => {
    member = memberDeployment();
    failing = neverReady();
    custom = customDomain();
    // Awaited by the tests; a rejection meanwhile is theirs to report, not an unhandled one.
    for (const p of [member, failing, custom]) p.catch(() => undefined);
  });
  afterAll(async () => {
    await Promise.allSettled([member, failing, custom]);
  }, 120_000);

  test(
    "deploy_default_api from Python of a member's LLMClient: deployed at <name>-<username>.<account>.<API domain> in Route 53",
    () => member,
    120_000,
  );

  // Smarter sends no e-mail when a deployment fails (deploy_default_api.py).
  test(
    'a certificate that never becomes Ready: TLS Failed after exactly 30 checks, and no e-mail',
    () => failing,
    120_000,
  );

  test(
    'register_custom_domain → verify_custom_domain → deploy_custom_api from Python, as the delegation and the certificate appear',
    () => custom,
    120_000,
  );
});
