/**
 * The rows the infrastructure tasks read and write: Smarter's LLMClient, its custom domain and that domain's DNS
 * records, and the account's contacts. Status strings are Smarter's `TextChoices` values. Smarter saves with
 * `save(asynchronous=True)`, which only skips its model signals; these UPDATEs likewise fire none.
 */
import type { Queryable, Row } from '../db/database.js';
import { NOW, insertModel } from '../db/django.js';
import { bool, num, str, strOrNull } from '../db/columns.js';

export const DNS = {
  VERIFYING: 'Verifying',
  NOT_VERIFIED: 'Not Verified',
  VERIFIED: 'Verified',
  FAILED: 'Failed',
} as const;
export const TLS = {
  NO_CERTIFICATE: 'No Certificate',
  REQUESTED: 'Requested',
  ISSUED: 'Issued',
  FAILED: 'Failed',
} as const;
export const DOMAIN = {
  NOT_VERIFIED: 'Not Verified',
  VERIFYING: 'Verifying',
  VERIFIED: 'Verified',
  FAILED: 'Failed',
} as const;

export interface CustomDomainRow {
  id: number;
  domainName: string;
  zoneId: string;
  status: string;
  message: string;
  verifiedAt: string | null;
  userProfileId: number;
  accountId: number;
}

export interface LlmclientRow {
  id: number;
  name: string;
  /** The owner's `auth_user.username`: part of the host of an LLMClient the account's admin does not own. */
  ownerUsername: string;
  /** The owner's user is the account's admin (`get_cached_admin_user_for_account`). */
  ownerIsAdmin: boolean;
  deployed: boolean;
  dnsStatus: string | null;
  tlsStatus: string | null;
  accountId: number;
  accountNumber: string;
  customDomain: CustomDomainRow | null;
}

const DOMAIN_SELECT = `SELECT d.id, d.domain_name, d.aws_hosted_zone_id, d.verification_status, d.verification_message,
  d.verified_at, d.user_profile_id, p.account_id
  FROM llmclient_llmclientcustomdomain d JOIN account_userprofile p ON p.id = d.user_profile_id`;

function toDomain(r: Row): CustomDomainRow {
  return {
    id: num(r.id),
    domainName: str(r.domain_name),
    zoneId: str(r.aws_hosted_zone_id),
    status: str(r.verification_status),
    message: str(r.verification_message),
    verifiedAt: strOrNull(r.verified_at),
    userProfileId: num(r.user_profile_id),
    accountId: num(r.account_id),
  };
}

/**
 * The user of the account's first UserProfile (by primary key) whose user is staff: Smarter's
 * `get_cached_admin_user_for_account`. Smarter creates such a user when the account has none; the worker creates
 * no users, so then nobody is the admin.
 */
const ADMIN_USER_OF_ACCOUNT = (
  account: string,
) => `(SELECT ap.user_id FROM account_userprofile ap JOIN auth_user au ON au.id = ap.user_id
  WHERE ap.account_id = ${account} AND au.is_staff = 1 ORDER BY ap.id LIMIT 1)`;

/** The LLMClient with its account, its owner (and whether the owner is the account's admin) and custom domain, or null. */
export async function findLlmclient(db: Queryable, id: number): Promise<LlmclientRow | null> {
  const [r] = await db.select(
    `SELECT l.id, l.name, l.deployed, l.dns_verification_status, l.tls_certificate_issuance_status, l.custom_domain_id,
       a.id AS account_id, a.account_number, u.username AS owner_username,
       COALESCE(p.user_id = ${ADMIN_USER_OF_ACCOUNT('p.account_id')}, 0) AS owner_is_admin
     FROM llmclient_llmclient l JOIN account_userprofile p ON p.id = l.user_profile_id JOIN account_account a ON a.id = p.account_id
       JOIN auth_user u ON u.id = p.user_id
     WHERE l.id = ?`,
    [id],
  );
  if (!r) return null;
  const customDomain = r.custom_domain_id === null ? null : await customDomainById(db, num(r.custom_domain_id));
  return {
    id: num(r.id),
    name: str(r.name),
    ownerUsername: str(r.owner_username),
    ownerIsAdmin: bool(r.owner_is_admin),
    deployed: bool(r.deployed),
    dnsStatus: strOrNull(r.dns_verification_status),
    tlsStatus: strOrNull(r.tls_certificate_issuance_status),
    accountId: num(r.account_id),
    accountNumber: str(r.account_number),
    customDomain,
  };
}

/** Django's `LLMClient.objects.get(id=…)`: DoesNotExist names the row and what the task was doing. */
export async function updateLlmclient(
  db: Queryable,
  id: number,
  fields: Partial<{ deployed: boolean; dns_verification_status: string; tls_certificate_issuance_status: string }>,
): Promise<void> {
  const entries = Object.entries(fields);
  if (entries.length === 0) return;
  const sets = entries.map(([k]) => `${k} = ?`).join(', ');
  const values = entries.map(([, v]) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));
  await db.execute(`UPDATE llmclient_llmclient SET ${sets}, updated_at = ${NOW} WHERE id = ?`, [...values, id]);
}

/** The first custom domain, by id, that `where` selects (Django's `.filter(…).first()`). */
async function firstDomain(db: Queryable, where: string, params: unknown[]): Promise<CustomDomainRow | null> {
  const [r] = await db.select(`${DOMAIN_SELECT} WHERE ${where} ORDER BY d.id LIMIT 1`, params);
  return r ? toDomain(r) : null;
}

export const customDomainById = (db: Queryable, id: number) => firstDomain(db, 'd.id = ?', [id]);

export const customDomainByZone = (db: Queryable, zoneId: string) =>
  firstDomain(db, 'd.aws_hosted_zone_id = ?', [zoneId]);

/** The account's row for a domain, whoever in the account owns it (`filter(user_profile__account=…, domain_name=…)`). */
export const accountCustomDomain = (db: Queryable, accountId: number, domainName: string) =>
  firstDomain(db, 'p.account_id = ? AND d.domain_name = ?', [accountId, domainName]);

/** Another account's row for a domain (`filter(domain_name=…).exclude(user_profile__account=…).first()`). */
export const otherAccountCustomDomain = (db: Queryable, accountId: number, domainName: string) =>
  firstDomain(db, 'd.domain_name = ? AND p.account_id <> ?', [domainName, accountId]);

/**
 * `LLMClientCustomDomain.set_verification_status`: the status and its message (none once Verified); `verified_at`
 * is now when the domain becomes Verified and NULL for every other status. Written as its queryset `.update()`
 * writes them: `updated_at` does not move.
 */
export async function setDomainStatus(db: Queryable, id: number, status: string, message = ''): Promise<void> {
  await db.execute(
    `UPDATE llmclient_llmclientcustomdomain SET verification_status = ?, verification_message = ?,
       verified_at = ${status === DOMAIN.VERIFIED ? NOW : 'NULL'} WHERE id = ?`,
    [status, status === DOMAIN.VERIFIED ? '' : message.slice(0, 1024), id],
  );
}

/** Django's `name` of a custom domain: its domain in snake case (migration 0006's `custom_domain_name`). */
export function customDomainName(domainName: string): string {
  return (
    domainName
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'custom_domain'
  );
}

/** Records the domain's hosted zone on its row (`host.aws_hosted_zone_id = …; host.save()`). */
export async function setCustomDomainZone(db: Queryable, id: number, zoneId: string): Promise<void> {
  await db.execute(
    `UPDATE llmclient_llmclientcustomdomain SET aws_hosted_zone_id = ?, updated_at = ${NOW} WHERE id = ?`,
    [zoneId, id],
  );
}

/** `LLMClientCustomDomain.objects.create(user_profile=…, domain_name=…)`, with its hosted zone. */
export async function createCustomDomain(
  db: Queryable,
  userProfileId: number,
  domainName: string,
  zoneId: string,
): Promise<number> {
  // `name` is unique per owner; two domains can share a snake-case name (`a-b.com`, `a.b.com`): number them,
  // as migration 0006 does.
  const base = customDomainName(domainName);
  const taken = new Set(
    (
      await db.select('SELECT name FROM llmclient_llmclientcustomdomain WHERE user_profile_id = ? AND name LIKE ?', [
        userProfileId,
        `${base}%`,
      ])
    ).map((r) => str(r.name)),
  );
  let name = base;
  for (let i = 1; taken.has(name); i++) name = `${base}_${i}`;
  return insertModel(db, 'llmclient_llmclientcustomdomain', {
    user_profile_id: userProfileId,
    domain_name: domainName,
    name,
    description: '',
    version: '1.0.0',
    annotations: '[]',
    aws_hosted_zone_id: zoneId,
    verification_status: DOMAIN.NOT_VERIFIED,
    verification_message: '',
  });
}

/** One row per (custom domain, name, type), as `update_or_create` keeps it. */
export async function upsertCustomDomainDns(
  db: Queryable,
  row: { customDomainId: number; name: string; type: string; value: string; ttl: number },
): Promise<number> {
  const [existing] = await db.select(
    'SELECT id FROM llmclient_llmclientcustomdomaindns WHERE custom_domain_id = ? AND record_name = ? AND record_type = ? LIMIT 1',
    [row.customDomainId, row.name, row.type],
  );
  if (existing) {
    await db.execute(
      `UPDATE llmclient_llmclientcustomdomaindns SET record_value = ?, record_ttl = ?, updated_at = ${NOW} WHERE id = ?`,
      [row.value.slice(0, 255), row.ttl, existing.id],
    );
    return num(existing.id);
  }
  return insertModel(db, 'llmclient_llmclientcustomdomaindns', {
    custom_domain_id: row.customDomainId,
    record_name: row.name,
    record_type: row.type,
    record_value: row.value.slice(0, 255),
    record_ttl: row.ttl,
  });
}

/** The deployed LLMClient on a custom domain (`LLMClient.objects.filter(custom_domain=…, deployed=True).first()`). */
export async function deployedLlmclientOn(db: Queryable, customDomainId: number): Promise<number | null> {
  const [r] = await db.select(
    'SELECT id FROM llmclient_llmclient WHERE custom_domain_id = ? AND deployed = 1 ORDER BY id LIMIT 1',
    [customDomainId],
  );
  return r ? num(r.id) : null;
}

export async function accountById(
  db: Queryable,
  id: number,
): Promise<{ id: number; accountNumber: string; companyName: string } | null> {
  const [r] = await db.select('SELECT id, account_number, company_name FROM account_account WHERE id = ?', [id]);
  return r ? { id: num(r.id), accountNumber: str(r.account_number), companyName: str(r.company_name) } : null;
}

export async function accountByNumber(
  db: Queryable,
  accountNumber: string,
): Promise<{ id: number; accountNumber: string } | null> {
  const [r] = await db.select('SELECT id, account_number FROM account_account WHERE account_number = ?', [
    accountNumber,
  ]);
  return r ? { id: num(r.id), accountNumber: str(r.account_number) } : null;
}

/**
 * The profile a new custom domain row is owned by: the admin user's (`get_cached_admin_user_for_account`), else,
 * since the worker creates no users where Smarter would create an admin, the account's first profile.
 */
export async function registrationOwnerProfile(db: Queryable, accountId: number): Promise<number | null> {
  const [r] = await db.select(
    `SELECT p.id FROM account_userprofile p JOIN auth_user u ON u.id = p.user_id WHERE p.account_id = ?
     ORDER BY u.is_staff DESC, p.id LIMIT 1`,
    [accountId],
  );
  return r ? num(r.id) : null;
}

/** An `AccountContact`: its address, and whether it is a test contact, which Smarter mails quietly (not at all). */
export interface Contact {
  email: string;
  isTest: boolean;
}

const toContact = (r: Row): Contact => ({ email: str(r.email), isTest: bool(r.is_test) });

/** `AccountContact.get_primary_contact(account)`: the first primary contact, or null. */
export async function primaryContact(db: Queryable, accountId: number): Promise<Contact | null> {
  const [r] = await db.select(
    'SELECT email, is_test FROM account_accountcontact WHERE account_id = ? AND is_primary = 1 ORDER BY id LIMIT 1',
    [accountId],
  );
  return r ? toContact(r) : null;
}

/** Every contact of the account (`AccountContact.objects.filter(account=account)`), test contacts included. */
export async function accountContacts(db: Queryable, accountId: number): Promise<Contact[]> {
  return (
    await db.select('SELECT email, is_test FROM account_accountcontact WHERE account_id = ? ORDER BY id', [accountId])
  ).map(toContact);
}
