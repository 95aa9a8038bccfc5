/**
 * The custom domain's row as Smarter's model writes it, on a real MariaDB: its verification status through the
 * queryset `.update()` of `set_verification_status`, and the name of a second domain whose snake-case name is
 * taken (decided in docs/tasks/llmclient.md).
 */
import { DOMAIN, createCustomDomain, setDomainStatus } from '../../tasks/llmclient/rows.js';
import { type TestDatabase, createTestDatabase, seed } from '../support/db.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase('customdomain');
});
afterAll(async () => t.drop());

const row = async (id: number) =>
  (
    await t.db.select(
      'SELECT name, verification_status, verification_message, verified_at, updated_at FROM llmclient_llmclientcustomdomain WHERE id = ?',
      [id],
    )
  )[0];

// Smarter: smarter/apps/llmclient/models.py (LLMClientCustomDomain.set_verification_status: objects.filter(pk=…).update(…)).
test('a verification status is written without moving updated_at; Verified sets verified_at and clears the message, any other status clears verified_at', async () => {
  const { profileId } = await seed(t.db);
  const id = await createCustomDomain(t.db, profileId, `status-${profileId}.example.com`, 'ZSTATUS');
  await t.db.execute(
    "UPDATE llmclient_llmclientcustomdomain SET updated_at = '2026-01-01 00:00:00.000000' WHERE id = ?",
    [id],
  );
  await setDomainStatus(t.db, id, DOMAIN.VERIFYING, 'Waiting for the NS records.');
  expect(await row(id)).toMatchObject({
    verification_status: 'Verifying',
    verification_message: 'Waiting for the NS records.',
    verified_at: null,
    updated_at: '2026-01-01 00:00:00.000000',
  });
  await setDomainStatus(t.db, id, DOMAIN.VERIFIED, 'ignored');
  const verified = await row(id);
  expect(verified).toMatchObject({ verification_status: 'Verified', verification_message: '' });
  expect(verified?.verified_at).not.toBeNull();
  expect(verified?.updated_at).toBe('2026-01-01 00:00:00.000000');
  await setDomainStatus(t.db, id, DOMAIN.FAILED, 'x'.repeat(2000));
  expect(await row(id)).toMatchObject({
    verification_status: 'Failed',
    verified_at: null,
    updated_at: '2026-01-01 00:00:00.000000',
  });
  expect(String((await row(id))?.verification_message)).toHaveLength(1024);
});

// Smarter: smarter/apps/llmclient/migrations/0006 (custom_domain_name, numbered when taken); decided in docs/tasks/llmclient.md.
test('two domains of one owner with one snake-case name (a-b.com, a.b.com) are both registered: the second name is numbered', async () => {
  const { profileId } = await seed(t.db);
  const first = await createCustomDomain(t.db, profileId, `a-b${profileId}.com`, 'ZA');
  const second = await createCustomDomain(t.db, profileId, `a.b${profileId}.com`, 'ZB');
  expect((await row(first))?.name).toBe(`a_b${profileId}_com`);
  expect((await row(second))?.name).toBe(`a_b${profileId}_com_1`);
});
