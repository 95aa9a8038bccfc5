/**
 * What the LLMClient infrastructure task tests (spec/integration/llmclient.*-checks-and-reschedules.test.ts) share:
 * the eleven tasks, a test database per file, and before each test a seeded account with an admin owner, two
 * contacts, in-memory clouds (spec/support/fake-cloud.ts) and a runner (spec/support/check-runner.ts) of its own.
 * The state is exported as live bindings: a test reads the values its `beforeEach` set.
 */
import type { Logger } from '../../lib/logger.js';
import { SMARTER_CATALOG } from '../../tasks/catalog.js';
import { llmclientTasks } from '../../tasks/llmclient/index.js';
import { type SmarterDeps, taskEnv } from '../../tasks/env/task-env.js';
import { CheckRunner } from './check-runner.js';
import { type TestDatabase, createTestDatabase, seed } from './db.js';
import { FakeCloud } from './fake-cloud.js';
import { alphaSettings } from './alpha-settings.js';
import { llmclientState } from './smarter-db.js';

export const API = 'alpha.api.platform.example.com';
export const NS = 'example-platform-alpha';
export const LB = ['192.0.2.10'];
export const env = taskEnv(alphaSettings());
// The llmclient app's eleven infrastructure tasks; its twelfth, create_llmclient_request, is operational.
export const ELEVEN = [...SMARTER_CATALOG]
  .filter(([n, kind]) => n.startsWith('smarter.apps.llmclient.') && kind === 'infrastructure')
  .map(([n]) => n);
export const tasks = llmclientTasks(env).filter((x) => ELEVEN.includes(x.name));

export let t: TestDatabase;
export let ids: Awaited<ReturnType<typeof seed>>;
export let accountNumber: string;
export let host: string;
export let cloud: FakeCloud;
export let runner: CheckRunner<SmarterDeps>;

/** A Smarter account number (`\d{4}-\d{4}-\d{4}`) no other account of the test database has. */
export const validAccountNumber = (accountId: number) =>
  `3141-${String(Math.floor(accountId / 10000) % 10000).padStart(4, '0')}-${String(accountId % 10000).padStart(4, '0')}`;

/** A user of the account who is not its admin, with a profile in it: `{ profileId, username }`. */
export async function addMember(accountId: number, username: string): Promise<{ profileId: number; username: string }> {
  const u = await t.db.execute('INSERT INTO auth_user (username, is_staff) VALUES (?, 0)', [username]);
  const p = await t.db.execute(
    'INSERT INTO account_userprofile (user_id, account_id, created_at, updated_at) VALUES (?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))',
    [u.insertId, accountId],
  );
  return { profileId: p.insertId, username };
}

/** The test's LLMClient now belongs to `profileId`: its host carries that user's name unless they are the admin. */
export async function ownLlmclient(profileId: number): Promise<void> {
  await t.db.execute('UPDATE llmclient_llmclient SET user_profile_id = ? WHERE id = ?', [profileId, ids.llmclientId]);
}

/** The test database (one per file) and, before each test, a seeded account, its contacts, clouds and runner. */
export function llmclientInfraForFile(): void {
  beforeAll(async () => {
    t = await createTestDatabase('infra');
  });
  afterAll(async () => t.drop());

  beforeEach(async () => {
    ids = await seed(t.db);
    await t.db.execute("UPDATE llmclient_llmclient SET name = CONCAT('Support_Bot', id) WHERE id = ?", [
      ids.llmclientId,
    ]);
    // The seeded owner is the account's admin (its first staff profile), whose LLMClients' hosts carry no user name.
    await t.db.execute('UPDATE auth_user SET is_staff = 1 WHERE id = ?', [ids.userId]);
    accountNumber = validAccountNumber(ids.accountId);
    await t.db.execute('UPDATE account_account SET account_number = ? WHERE id = ?', [accountNumber, ids.accountId]);
    host = `support-bot${ids.llmclientId}.${accountNumber}.${API}`;
    await t.db.execute(
      "INSERT INTO account_accountcontact (first_name, last_name, email, is_primary, account_id, created_at, updated_at) VALUES ('Ada', 'L', ?, 1, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)), ('Bob', 'M', ?, 0, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
      [`ada${ids.accountId}@example.org`, ids.accountId, `bob${ids.accountId}@example.org`, ids.accountId],
    );
    cloud = new FakeCloud();
    const apiZone = cloud.addZone(API);
    cloud.setRecord(apiZone.id, { name: API, type: 'A', ttl: 300, values: LB });
    runner = new CheckRunner(tasks, { db: t.db, cloud: cloud.deps });
  });
}

export const llmclient = () => llmclientState(t.db, ids.llmclientId);
export const apiZoneId = () => [...cloud.zones.values()].find((z) => z.name === API)?.id ?? '';

/** This test's runner logs to `logger`. */
export function logTo(logger: Logger): void {
  runner = new CheckRunner(tasks, { db: t.db, cloud: cloud.deps }, logger);
}
