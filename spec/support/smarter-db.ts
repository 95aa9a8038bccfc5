/** Smarter's tasks, and a seeded database with Smarter's tables, for the tests that run the tasks in-process. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps } from '../../tasks/env/task-env.js';
import { smarterTasks } from '../../tasks/index.js';
import { testCloud } from './cloud.js';
import type { Database } from '../../tasks/db/database.js';
import { type TestDatabase, createTestDatabase, seed } from './db.js';

/** Smarter's tasks as a worker of `operationalQueue` registers them, with Smarter's retry settings. */
export function smarterTasksOn(
  operationalQueue = 'default_celery_task_queue',
  infrastructureQueue = 'infrastructure_celery_task_queue',
): AnyTask<SmarterDeps>[] {
  return smarterTasks({ operationalQueue, infrastructureQueue, maxRetries: 3, retryBackoff: true });
}

const byName = new Map(smarterTasksOn().map((t) => [t.name, t]));

/** One of Smarter's tasks, by its full name or by its last part (`create_charge`). */
export function smarterTask(name: string): AnyTask<SmarterDeps> {
  const t = byName.get(name) ?? [...byName.values()].find((x) => x.name.endsWith(`.${name}`));
  if (!t) throw new Error(`no task ${name}`);
  return t;
}

export interface SeededDatabase {
  readonly database: TestDatabase;
  readonly db: Database;
  /** What the tasks run on: this database and the cloud stand-ins. */
  readonly deps: SmarterDeps;
  /** The rows `seed` wrote (a user, account, profile, LLM client, prompt, plugin, selector). */
  readonly ids: Awaited<ReturnType<typeof seed>>;
}

/**
 * A fresh database (named after `prefix`) seeded before the file's tests and dropped after them. Call at the
 * top of a test file; read its fields inside tests, once `beforeAll` has run.
 */
export function seededDatabase(prefix: string): SeededDatabase {
  let state: { database: TestDatabase; deps: SmarterDeps; ids: Awaited<ReturnType<typeof seed>> } | undefined;
  const get = () => {
    if (!state) throw new Error(`the ${prefix} database is read before its beforeAll ran`);
    return state;
  };
  beforeAll(async () => {
    const database = await createTestDatabase(prefix);
    state = { database, deps: { db: database.db, cloud: testCloud() }, ids: await seed(database.db) };
  });
  afterAll(async () => state?.database.drop());
  return {
    get database() {
      return get().database;
    },
    get db() {
      return get().database.db;
    },
    get deps() {
      return get().deps;
    },
    get ids() {
      return get().ids;
    },
  };
}

/**
 * An LLMClient `bot<id>` of a new account, owned by the account's admin (its first staff profile, so its host
 * carries no user name), with the account's primary contact; `host` is its default host under `apiDomain`.
 */
export async function newLlmclient(
  db: Database,
  apiDomain: string,
): Promise<{ id: number; accountId: number; accountNumber: string; host: string; contact: string }> {
  const ids = await seed(db);
  await db.execute("UPDATE llmclient_llmclient SET name = CONCAT('bot', id) WHERE id = ?", [ids.llmclientId]);
  await db.execute('UPDATE auth_user SET is_staff = 1 WHERE id = ?', [ids.userId]);
  const [a] = await db.select('SELECT account_number FROM account_account WHERE id = ?', [ids.accountId]);
  const contact = `owner${ids.accountId}@example.org`;
  await db.execute(
    "INSERT INTO account_accountcontact (first_name, last_name, email, is_primary, account_id, created_at, updated_at) VALUES ('Ada', 'L', ?, 1, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
    [contact, ids.accountId],
  );
  return {
    id: ids.llmclientId,
    accountId: ids.accountId,
    accountNumber: String(a?.account_number),
    host: `bot${ids.llmclientId}.${String(a?.account_number)}.${apiDomain}`,
    contact,
  };
}

/** What the deployment tests follow of an LLMClient: deployed, and its domain's (dns) and certificate's (tls) status. */
export const llmclientState = async (db: Database, id: number) =>
  (
    await db.select(
      'SELECT deployed, dns_verification_status AS dns, tls_certificate_issuance_status AS tls FROM llmclient_llmclient WHERE id = ?',
      [id],
    )
  )[0];
