/**
 * The rows the infrastructure tasks read and write: Smarter's LLMClient, its custom domain and that domain's DNS
 * records, and the account's contacts. Status strings are Smarter's `TextChoices` values. Smarter saves with
 * `save(asynchronous=True)`, which only skips its model signals; these UPDATEs likewise fire none.
 */
import type { Queryable, Row } from '../db/database.js';
import { NOW, insertModel } from '../db/django.js';
import { DoesNotExist } from '../errors.js';

export const DNS = { VERIFYING: 'Verifying', NOT_VERIFIED: 'Not Verified', VERIFIED: 'Verified', FAILED: 'Failed' } as const;
export const TLS = { NO_CERTIFICATE: 'No Certificate', REQUESTED: 'Requested', ISSUED: 'Issued', FAILED: 'Failed' } as const;
export const DOMAIN = { NOT_VERIFIED: 'Not Verified', VERIFYING: 'Verifying', VERIFIED: 'Verified', FAILED: 'Failed' } as const;

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
  deployed: boolean;
  dnsStatus: string | null;
  tlsStatus: string | null;
  accountId: number;
  accountNumber: string;
  customDomain: CustomDomainRow | null;
}

const str = (c: Row[string] | undefined): string => (c === null || c === undefined ? '' : String(c));
const num = (c: Row[string] | undefined): number => Number(c);

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
    verifiedAt: r.verified_at === null || r.verified_at === undefined ? null : String(r.verified_at),
    userProfileId: num(r.user_profile_id),
    accountId: num(r.account_id),
  };
}

/** The LLMClient with its account and custom domain, or null. */
export async function findLlmclient(db: Queryable, id: number): Promise<LlmclientRow | null> {
  const [r] = await db.select(
    `SELECT l.id, l.name, l.deployed, l.dns_verification_status, l.tls_certificate_issuance_status, l.custom_domain_id,
       a.id AS account_id, a.account_number
     FROM llmclient_llmclient l JOIN account_userprofile p ON p.id = l.user_profile_id JOIN account_account a ON a.id = p.account_id
     WHERE l.id = ?`,
    [id],
  );
  if (!r) return null;
  const customDomain = r.custom_domain_id === null ? null : await customDomainById(db, num(r.custom_domain_id));
  return {
    id: num(r.id),
    name: str(r.name),
    deployed: num(r.deployed) === 1,
    dnsStatus: r.dns_verification_status === null ? null : str(r.dns_verification_status),
    tlsStatus: r.tls_certificate_issuance_status === null ? null : str(r.tls_certificate_issuance_status),
    accountId: num(r.account_id),
    accountNumber: str(r.account_number),
    customDomain,
  };
}

/** Django's `LLMClient.objects.get(id=…)`: DoesNotExist names the row and what the task was doing. */
export async function getLlmclient(db: Queryable, id: number, doing: string): Promise<LlmclientRow> {
  const row = await findLlmclient(db, id);
  if (!row) throw new DoesNotExist('llmclient.models.LLMClient', `${doing}: LLMClient ${id} does not exist (llmclient_llmclient)`);
  return row;
}

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

export async function customDomainById(db: Queryable, id: number): Promise<CustomDomainRow | null> {
  const [r] = await db.select(`${DOMAIN_SELECT} WHERE d.id = ?`, [id]);
  return r ? toDomain(r) : null;
}

export async function customDomainByZone(db: Queryable, zoneId: string): Promise<CustomDomainRow | null> {
  const [r] = await db.select(`${DOMAIN_SELECT} WHERE d.aws_hosted_zone_id = ? ORDER BY d.id LIMIT 1`, [zoneId]);
  return r ? toDomain(r) : null;
}

export async function customDomainsByName(db: Queryable, domainName: string): Promise<CustomDomainRow[]> {
  return (await db.select(`${DOMAIN_SELECT} WHERE d.domain_name = ? ORDER BY d.id`, [domainName])).map(toDomain);
}

/**
 * `LLMClientCustomDomain.set_verification_status`: the status and its message; `verified_at` is set when it
 * becomes Verified and kept otherwise.
 */
export async function setDomainStatus(db: Queryable, id: number, status: string, message = ''): Promise<void> {
  const verified = status === DOMAIN.VERIFIED ? `, verified_at = ${NOW}` : '';
  await db.execute(
    `UPDATE llmclient_llmclientcustomdomain SET verification_status = ?, verification_message = ?${verified}, updated_at = ${NOW} WHERE id = ?`,
    [status, message.slice(0, 1024), id],
  );
}

/** Django's `name` of a custom domain: its domain in snake case (migration 0006's `custom_domain_name`). */
export function customDomainName(domainName: string): string {
  return domainName.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '') || 'custom_domain';
}

/** `get_or_create(user_profile=…, domain_name=…)`, then the hosted zone and status Smarter writes. */
export async function upsertCustomDomain(db: Queryable, userProfileId: number, domainName: string, zoneId: string): Promise<number> {
  const [existing] = await db.select('SELECT id FROM llmclient_llmclientcustomdomain WHERE user_profile_id = ? AND domain_name = ? LIMIT 1', [userProfileId, domainName]);
  if (existing) {
    await db.execute(`UPDATE llmclient_llmclientcustomdomain SET aws_hosted_zone_id = ?, updated_at = ${NOW} WHERE id = ?`, [zoneId, existing.id]);
    return num(existing.id);
  }
  // `name` is unique per owner; two domains can share a snake-case name (`a-b.com`, `a.b.com`): number them,
  // as migration 0006 does.
  const base = customDomainName(domainName);
  const taken = new Set(
    (await db.select('SELECT name FROM llmclient_llmclientcustomdomain WHERE user_profile_id = ? AND name LIKE ?', [userProfileId, `${base}%`])).map((r) => str(r.name)),
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
    await db.execute(`UPDATE llmclient_llmclientcustomdomaindns SET record_value = ?, record_ttl = ?, updated_at = ${NOW} WHERE id = ?`, [
      row.value.slice(0, 255),
      row.ttl,
      existing.id,
    ]);
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
  const [r] = await db.select('SELECT id FROM llmclient_llmclient WHERE custom_domain_id = ? AND deployed = 1 ORDER BY id LIMIT 1', [customDomainId]);
  return r ? num(r.id) : null;
}

export async function accountById(db: Queryable, id: number): Promise<{ id: number; accountNumber: string; companyName: string } | null> {
  const [r] = await db.select('SELECT id, account_number, company_name FROM account_account WHERE id = ?', [id]);
  return r ? { id: num(r.id), accountNumber: str(r.account_number), companyName: str(r.company_name) } : null;
}

export async function accountByNumber(db: Queryable, accountNumber: string): Promise<{ id: number; accountNumber: string } | null> {
  const [r] = await db.select('SELECT id, account_number FROM account_account WHERE account_number = ?', [accountNumber]);
  return r ? { id: num(r.id), accountNumber: str(r.account_number) } : null;
}

/**
 * The profile a registration is owned by: Smarter takes the account's admin user's profile
 * (`get_cached_admin_user_for_account`); ours is its staff user's, else its first profile.
 */
export async function adminProfileOf(db: Queryable, accountId: number): Promise<number | null> {
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

const toContact = (r: Row): Contact => ({ email: str(r.email), isTest: num(r.is_test) === 1 });

/** `AccountContact.get_primary_contact(account)`: the first primary contact, or null. */
export async function primaryContact(db: Queryable, accountId: number): Promise<Contact | null> {
  const [r] = await db.select('SELECT email, is_test FROM account_accountcontact WHERE account_id = ? AND is_primary = 1 ORDER BY id LIMIT 1', [accountId]);
  return r ? toContact(r) : null;
}

/** Every contact of the account (`AccountContact.objects.filter(account=account)`), test contacts included. */
export async function accountContacts(db: Queryable, accountId: number): Promise<Contact[]> {
  return (await db.select('SELECT email, is_test FROM account_accountcontact WHERE account_id = ? ORDER BY id', [accountId])).map(toContact);
}
