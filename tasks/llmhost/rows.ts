/** The llmhost tables as the tasks read and write them (Django's columns; `updated_at` set as `auto_now` does). */
import type { Queryable, Row } from '../db/database.js';
import { NOW, djangoJson } from '../db/django.js';
import type { ComputeRow } from './spec.js';
import { fields, json, num, numOrNull, str, strOrNull } from '../db/columns.js';

export interface LlmhostRow {
  id: number;
  name: string;
  status: string;
  spec: unknown;
  computeId: number | null;
  userProfileId: number;
  accountNumber: string;
  deployedAt: string | null;
  /** Seconds since `deployed_at`, by MariaDB's clock, or null when it was never launched. */
  secondsSinceDeployed: number | null;
  replicas: number;
  /** One replica's share of its compute's node price (DECIMAL text), or null. */
  costPerHour: string | null;
  healthCheckUrl: string;
  apiKeySecretId: number | null;
}

function toLlmhost(r: Row): LlmhostRow {
  return {
    ...fields(r, {
      id: num,
      name: str,
      status: str,
      spec: json,
      compute_id: numOrNull,
      user_profile_id: num,
      account_number: str,
      deployed_at: strOrNull,
      replicas: num,
      cost_per_hour: strOrNull,
      health_check_url: str,
      api_key_secret_id: numOrNull,
    }),
    secondsSinceDeployed: r.deployed_us === null ? null : num(r.deployed_us) / 1e6,
  };
}

const LLMHOST_SELECT = `SELECT h.id, h.name, h.status, h.spec, h.compute_id, h.user_profile_id, h.deployed_at, a.account_number,
    TIMESTAMPDIFF(MICROSECOND, h.deployed_at, ${NOW}) AS deployed_us, h.replicas, h.cost_per_hour, h.health_check_url, h.api_key_secret_id
  FROM llmhost_llmhost h JOIN account_userprofile p ON p.id = h.user_profile_id JOIN account_account a ON a.id = p.account_id`;

export async function findLlmhost(db: Queryable, id: number): Promise<LlmhostRow | null> {
  const rows = await db.select(`${LLMHOST_SELECT} WHERE h.id = ?`, [id]);
  return rows[0] ? toLlmhost(rows[0]) : null;
}

export async function llmhostsWithStatus(
  db: Queryable,
  statuses: readonly string[],
  computeId?: number,
): Promise<LlmhostRow[]> {
  const marks = statuses.map(() => '?').join(', ');
  const byCompute = computeId === undefined ? '' : ' AND h.compute_id = ?';
  const rows = await db.select(
    `${LLMHOST_SELECT} WHERE h.status IN (${marks})${byCompute} ORDER BY h.id`,
    computeId === undefined ? [...statuses] : [...statuses, computeId],
  );
  return rows.map(toLlmhost);
}

export async function updateLlmhost(db: Queryable, id: number, fields: Record<string, unknown>): Promise<void> {
  const names = Object.keys(fields);
  const sets = names.map((n) => (fields[n] === NOW ? `${n} = ${NOW}` : `${n} = ?`));
  const values = names.filter((n) => fields[n] !== NOW).map((n) => fields[n]);
  await db.execute(`UPDATE llmhost_llmhost SET ${sets.join(', ')}, updated_at = ${NOW} WHERE id = ?`, [...values, id]);
}

/** `LLMHost.record_event()`: one `llmhost_llmhostevent` row, with the LLMHost's status at the time. */
export async function recordEvent(
  db: Queryable,
  host: { id: number; name: string },
  eventType: string,
  status: string,
  message: string,
  details: Record<string, unknown> = {},
): Promise<void> {
  await db.execute(
    `INSERT INTO llmhost_llmhostevent (created_at, updated_at, llmhost_name, event_type, status, message, details, llmhost_id) VALUES (${NOW}, ${NOW}, ?, ?, ?, ?, ?, ?)`,
    [host.name, eventType, status, message, djangoJson(details), host.id],
  );
}

function toCompute(r: Row): ComputeRow {
  const spec = json(r.spec);
  return {
    ...fields(r, {
      id: num,
      name: str,
      user_profile_id: num,
      account_id: num,
      instance_type: str,
      cpu: num,
      memory_gb: num,
      gpu_count: num,
      gpu_memory_gb: num,
      max_nodes: num,
      price_per_hour: strOrNull,
      nodegroup_status: str,
      desired_nodes: num,
      ready_nodes: num,
      status_message: str,
    }),
    spec: typeof spec === 'object' && spec !== null ? (spec as Record<string, unknown>) : {},
  };
}

const COMPUTE_SELECT = `SELECT c.*, p.account_id FROM llmhost_llmhostcompute c JOIN account_userprofile p ON p.id = c.user_profile_id`;

export async function findCompute(db: Queryable, id: number): Promise<ComputeRow | null> {
  const rows = await db.select(`${COMPUTE_SELECT} WHERE c.id = ?`, [id]);
  return rows[0] ? toCompute(rows[0]) : null;
}

export async function allComputes(db: Queryable): Promise<ComputeRow[]> {
  return (await db.select(`${COMPUTE_SELECT} ORDER BY c.id`)).map(toCompute);
}

/** `reconcile_llmhost_computes`' query: computes with desired nodes, or with deployed LLMHosts. */
export async function computesInUse(db: Queryable, deployed: readonly string[]): Promise<ComputeRow[]> {
  const marks = deployed.map(() => '?').join(', ');
  const rows = await db.select(
    `${COMPUTE_SELECT} WHERE c.desired_nodes > 0 OR EXISTS (SELECT 1 FROM llmhost_llmhost h WHERE h.compute_id = c.id AND h.status IN (${marks})) ORDER BY c.id`,
    [...deployed],
  );
  return rows.map(toCompute);
}

export async function saveComputeState(
  db: Queryable,
  id: number,
  s: { nodegroupStatus: string; desired: number; ready: number; message: string },
): Promise<void> {
  await db.execute(
    `UPDATE llmhost_llmhostcompute SET nodegroup_status = ?, desired_nodes = ?, ready_nodes = ?, status_message = ?, last_reconciled_at = ${NOW}, updated_at = ${NOW} WHERE id = ?`,
    [s.nodegroupStatus, s.desired, s.ready, s.message, id],
  );
}

/** The account of a user profile (0 when the profile is gone). */
export async function accountIdOfProfile(db: Queryable, userProfileId: number): Promise<number> {
  const rows = await db.select('SELECT account_id FROM account_userprofile WHERE id = ?', [userProfileId]);
  return num(rows[0]?.account_id);
}

/** A compute with ready nodes and a price, and whose profile and account its charges go to. */
export interface ChargeableCompute {
  id: number;
  name: string;
  readyNodes: number;
  pricePerHour: string;
  profileId: number;
  accountId: number;
}

export async function chargeableComputes(db: Queryable): Promise<ChargeableCompute[]> {
  const rows = await db.select(
    `SELECT c.id, c.name, c.ready_nodes, c.price_per_hour, p.id AS profile_id, p.account_id
       FROM llmhost_llmhostcompute c JOIN account_userprofile p ON p.id = c.user_profile_id
      WHERE c.ready_nodes > 0 AND c.price_per_hour IS NOT NULL ORDER BY c.id`,
  );
  return rows.map((c) => ({
    id: num(c.id),
    name: str(c.name),
    readyNodes: num(c.ready_nodes),
    pricePerHour: str(c.price_per_hour),
    profileId: num(c.profile_id),
    accountId: num(c.account_id),
  }));
}
