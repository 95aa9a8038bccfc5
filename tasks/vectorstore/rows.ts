/**
 * The vectorstore rows the tasks read and write. Smarter saves with `save(update_fields=[…, "updated_at"])`, so
 * every UPDATE here sets `updated_at` too; its signals (`vectorstore_status_changed`, `document_loaded`…) are
 * Python receivers and are not fired.
 */
import type { Queryable, Row } from '../db/database.js';
import { NOW, djangoJson } from '../db/django.js';
import { bool, fields, json, num, numOrNull, str, strOrNull } from '../db/columns.js';

export interface VectorstoreRow {
  id: number;
  name: string;
  backend: string;
  hosting: string;
  isActive: boolean;
  dimension: number;
  metric: string;
  deletionProtection: boolean;
  /** The ApiConnection of a managed database (`connection_apiconnection.connectionbase_ptr_id`). */
  connectionId: number | null;
  /** The Secret Smarter generated for a self-hosted server's API key. */
  apiKeySecretId: number | null;
  embeddingsProviderId: number | null;
  embeddingsModel: string;
  status: string;
  /** Empty until Smarter's apply or deploy records one; `backend.indexName` then falls back to `default_index_name()`. */
  indexName: string;
  /** The owner's `account_number` (`user_profile.account`), which a managed database's default index name carries. */
  accountNumber: string;
  endpointUrl: string;
  vectorCount: number;
  spec: Record<string, unknown>;
  deployedAt: string | null;
  lastSnapshotAt: string | null;
}

export interface DocumentRow {
  id: number;
  vectorstoreId: number;
  name: string;
  source: string;
  content: string;
  metadata: Record<string, unknown>;
  status: string;
  chunkCount: number;
}

export interface SnapshotRow {
  id: number;
  name: string;
  status: string;
}

/** A JSON object column; '', NULL and any other JSON value read as {}. */
const obj = (c: Row[string] | undefined): Record<string, unknown> => {
  if (c === '') return {};
  const v = json(c);
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
};

/** `VectorstoreMeta.__str__`. */
export const describe = (v: VectorstoreRow): string => `${v.name} (${v.backend}, ${v.hosting})`;
/** `VectorstoreDocument.__str__`. */
export const describeDocument = (v: VectorstoreRow, d: DocumentRow): string => `${v.name}: ${d.name} (${d.status})`;

const VS_SELECT = `SELECT id, name, backend, hosting, is_active, dimension, metric, deletion_protection, connection_id, api_key_secret_id,
  embeddings_provider_id, embeddings_model, status, index_name, endpoint_url, vector_count, spec, deployed_at, last_snapshot_at,
  (SELECT a.account_number FROM account_userprofile p JOIN account_account a ON a.id = p.account_id WHERE p.id = v.user_profile_id) AS account_number
  FROM vectorstore_vectorstoremeta v`;

const toVectorstore = (r: Row): VectorstoreRow =>
  fields(r, {
    id: num,
    name: str,
    backend: str,
    hosting: str,
    is_active: bool,
    dimension: num,
    metric: str,
    deletion_protection: bool,
    connection_id: numOrNull,
    api_key_secret_id: numOrNull,
    embeddings_provider_id: numOrNull,
    embeddings_model: str,
    status: str,
    index_name: str,
    account_number: str,
    endpoint_url: str,
    vector_count: num,
    spec: obj,
    deployed_at: strOrNull,
    last_snapshot_at: strOrNull,
  });

export async function findVectorstore(db: Queryable, id: number): Promise<VectorstoreRow | null> {
  const [r] = await db.select(`${VS_SELECT} WHERE id = ?`, [id]);
  return r ? toVectorstore(r) : null;
}

/** `reconcile_vectorstores`' query: deployed, and provisioning, ready or failed. */
export async function deployedVectorstores(db: Queryable): Promise<VectorstoreRow[]> {
  const rows = await db.select(
    `${VS_SELECT} WHERE status IN ('provisioning', 'ready', 'failed') AND deployed_at IS NOT NULL ORDER BY id`,
  );
  return rows.map(toVectorstore);
}

/** `maintain_vectorstores`' query: ready and active. */
export async function readyVectorstores(db: Queryable): Promise<VectorstoreRow[]> {
  const rows = await db.select(`${VS_SELECT} WHERE status = 'ready' AND is_active = 1 ORDER BY id`);
  return rows.map(toVectorstore);
}

type VsColumns = {
  status: string;
  status_message: string;
  vector_count: number;
  stats: Record<string, unknown>;
  last_checked_at: typeof NOW;
  last_snapshot_at: typeof NOW;
  last_maintenance_at: typeof NOW;
};

/** UPDATE the given columns and `updated_at`; a value of `NOW` is MariaDB's clock. */
export async function updateVectorstore(db: Queryable, id: number, set: Partial<VsColumns>): Promise<void> {
  const cols: string[] = [];
  const params: unknown[] = [];
  for (const [k, v] of Object.entries(set)) {
    if (v === NOW) cols.push(`${k} = ${NOW}`);
    else {
      cols.push(`${k} = ?`);
      params.push(typeof v === 'object' ? djangoJson(v) : v);
    }
  }
  await db.execute(`UPDATE vectorstore_vectorstoremeta SET ${cols.join(', ')}, updated_at = ${NOW} WHERE id = ?`, [
    ...params,
    id,
  ]);
}

export async function findDocument(db: Queryable, id: number): Promise<DocumentRow | null> {
  const [r] = await db.select(
    'SELECT id, vectorstore_id, name, source, content, metadata, status, chunk_count FROM vectorstore_vectorstoredocument WHERE id = ?',
    [id],
  );
  if (!r) return null;
  return {
    id: num(r.id),
    vectorstoreId: num(r.vectorstore_id),
    name: str(r.name),
    source: str(r.source),
    content: str(r.content),
    metadata: obj(r.metadata),
    status: str(r.status),
    chunkCount: num(r.chunk_count),
  };
}

export async function setDocumentStatus(db: Queryable, id: number, status: string, message: string): Promise<void> {
  await db.execute(
    `UPDATE vectorstore_vectorstoredocument SET status = ?, status_message = ?, updated_at = ${NOW} WHERE id = ?`,
    [status, message, id],
  );
}

export async function setDocumentLoaded(db: Queryable, id: number, chunkCount: number): Promise<void> {
  await db.execute(
    `UPDATE vectorstore_vectorstoredocument SET status = 'loaded', chunk_count = ?, loaded_at = ${NOW}, updated_at = ${NOW} WHERE id = ?`,
    [chunkCount, id],
  );
}

export async function deleteDocumentRow(db: Queryable, id: number): Promise<void> {
  await db.execute('DELETE FROM vectorstore_vectorstoredocument WHERE id = ?', [id]);
}

/** `stuck_documents`: pending, loading or deleting, and untouched for `minutes`; with their status. */
export async function stuckDocuments(
  db: Queryable,
  vectorstoreId: number,
  minutes: number,
): Promise<{ id: number; status: string }[]> {
  const rows = await db.select(
    `SELECT id, status FROM vectorstore_vectorstoredocument
      WHERE vectorstore_id = ? AND status IN ('pending', 'loading', 'deleting') AND updated_at < UTC_TIMESTAMP(6) - INTERVAL ? MINUTE ORDER BY id`,
    [vectorstoreId, minutes],
  );
  return rows.map((r) => ({ id: num(r.id), status: str(r.status) }));
}

export async function insertSnapshot(
  db: Queryable,
  vectorstoreId: number,
  name: string,
  scheduled: boolean,
  vectorCount: number,
): Promise<number> {
  const res = await db.execute(
    `INSERT INTO vectorstore_vectorstoresnapshot (vectorstore_id, name, status, status_message, scheduled, vector_count, created_at, updated_at)
     VALUES (?, ?, 'creating', '', ?, ?, ${NOW}, ${NOW})`,
    [vectorstoreId, name, scheduled ? 1 : 0, vectorCount],
  );
  return res.insertId;
}

export async function updateSnapshot(
  db: Queryable,
  id: number,
  set: { name?: string; size_bytes?: number | null; status: string; status_message?: string },
): Promise<void> {
  const cols = Object.keys(set).map((k) => `${k} = ?`);
  await db.execute(`UPDATE vectorstore_vectorstoresnapshot SET ${cols.join(', ')}, updated_at = ${NOW} WHERE id = ?`, [
    ...Object.values(set),
    id,
  ]);
}

/** Newest first, as `Meta.ordering = ["-created_at"]` (the id breaks a tie within a microsecond). */
export async function snapshots(db: Queryable, vectorstoreId: number): Promise<SnapshotRow[]> {
  const rows = await db.select(
    'SELECT id, name, status FROM vectorstore_vectorstoresnapshot WHERE vectorstore_id = ? ORDER BY created_at DESC, id DESC',
    [vectorstoreId],
  );
  return rows.map((r) => ({ id: num(r.id), name: str(r.name), status: str(r.status) }));
}

export async function deleteSnapshotRow(db: Queryable, id: number): Promise<void> {
  await db.execute('DELETE FROM vectorstore_vectorstoresnapshot WHERE id = ?', [id]);
}

/** Whether `last_snapshot_at` is at least `hours` ago, on MariaDB's clock. */
export async function snapshotOlderThan(db: Queryable, vectorstoreId: number, hours: number): Promise<boolean> {
  const [r] = await db.select(
    'SELECT last_snapshot_at IS NULL OR last_snapshot_at <= UTC_TIMESTAMP(6) - INTERVAL ? SECOND AS due FROM vectorstore_vectorstoremeta WHERE id = ?',
    [Math.round(hours * 3600), vectorstoreId],
  );
  return bool(r?.due);
}

/** A vectorstore's ApiConnection row (`connection_apiconnection`, a child table of `connection_connectionbase`): its URL and key's Secret. */
export async function apiConnectionRow(db: Queryable, connectionId: number): Promise<Row | undefined> {
  const [r] = await db.select(
    'SELECT base_url, api_key_id FROM connection_apiconnection WHERE connectionbase_ptr_id = ?',
    [connectionId],
  );
  return r;
}

/** The embeddings Provider's name, API URL and key's Secret (no row when it is gone). */
export function embeddingsProviderRows(db: Queryable, providerId: number): Promise<Row[]> {
  return db.select('SELECT name, base_url, api_key_id FROM provider_provider WHERE id = ?', [providerId]);
}
