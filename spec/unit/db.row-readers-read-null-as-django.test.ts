/**
 * The row readers of tasks/ read a cell as Smarter's Django model field reads it: a field with null=True reads NULL
 * as null (Python's None), never as the text 'null' (`String(null)`) nor as '' (`str()`); a field with null=False
 * reads its text and its numbers.
 */
import type { Cell, Queryable, Row } from '../../tasks/db/database.js';
import { bool, json, num, numOrNull, str, strOrNull } from '../../tasks/db/columns.js';
import { findCompute, findLlmhost } from '../../tasks/llmhost/rows.js';
import { loadMcpClient } from '../../tasks/mcpclient/rows.js';
import { loadProvider } from '../../tasks/provider/rows.js';
import { findVectorstore } from '../../tasks/vectorstore/rows.js';

/** A database that answers every SELECT with the one row given (and never writes). */
const oneRow = (row: Row): Queryable => ({
  select: async () => [row],
  execute: async () => ({ affectedRows: 0, insertId: 0 }),
});

describe('the column readers of tasks/db/columns.ts', () => {
  test.each<[Cell | undefined, string, string | null, number, number | null]>([
    [null, '', null, 0, null],
    [undefined, '', null, 0, null],
    ['', '', '', 0, 0],
    ['7', '7', '7', 7, 7],
    [7, '7', '7', 7, 7],
  ])('%p reads as str %p, strOrNull %p, num %p, numOrNull %p', (cell, s, sn, n, nn) => {
    expect(str(cell)).toBe(s);
    expect(strOrNull(cell)).toBe(sn);
    expect(num(cell)).toBe(n);
    expect(numOrNull(cell)).toBe(nn);
  });

  test('a BooleanField is true only for 1; a JSONField decodes its text and reads NULL as null', () => {
    expect([bool(1), bool('1'), bool(0), bool(null)]).toEqual([true, true, false, false]);
    expect(json('{"a":[1]}')).toEqual({ a: [1] });
    expect(json(null)).toBeNull();
    expect(() => json('{')).toThrow(SyntaxError);
  });
});

describe('the row readers read a nullable field NULL as null', () => {
  test('Provider: base_url, connectivity_test_path, the URLs, dates and foreign keys', async () => {
    const p = await loadProvider(
      oneRow({
        id: 3,
        name: 'acme',
        status: 'verified',
        is_active: 1,
        is_deprecated: 0,
        is_suspended: 0,
        is_flagged: 0,
        base_url: null,
        api_key_id: null,
        connectivity_test_path: null,
        logo: null,
        website_url: null,
        contact_email: 'ops@acme.test',
        contact_email_verified: '2026-01-02 03:04:05.000000',
        support_email: null,
        support_email_verified: null,
        docs_url: null,
        terms_of_service_url: null,
        privacy_policy_url: null,
        tos_accepted_at: null,
        tos_accepted_by_id: null,
      }),
      3,
    );
    expect(p).toMatchObject({
      id: 3,
      name: 'acme',
      baseUrl: null,
      apiKeyId: null,
      connectivityTestPath: null,
      websiteUrl: null,
      contactEmail: 'ops@acme.test',
      contactEmailVerified: '2026-01-02 03:04:05.000000',
      tosAcceptedAt: null,
      tosAcceptedById: null,
    });
  });

  test('MCPClient: transport, endpoint_url and credentials', async () => {
    const m = await loadMcpClient(
      oneRow({
        id: 1,
        name: 'tools',
        status: 'active',
        transport: null,
        endpoint_url: null,
        auth_type: 'none',
        credentials_id: null,
        api_key_header: 'X-API-Key',
        headers: null,
        timeout: 12,
        allowed_tools: null,
      }),
      1,
    );
    expect(m).toMatchObject({ transport: null, endpointUrl: null, credentialsId: null, timeout: 12, headers: {} });
  });

  test('LLMHost and its compute: compute, deployment, cost, secret and price', async () => {
    const h = await findLlmhost(
      oneRow({
        id: 2,
        name: 'llama',
        status: 'pending',
        spec: '{}',
        compute_id: null,
        user_profile_id: 5,
        deployed_at: null,
        account_number: '1234-5678-9012',
        deployed_us: null,
        replicas: 1,
        cost_per_hour: null,
        health_check_url: '',
        api_key_secret_id: null,
      }),
      2,
    );
    expect(h).toMatchObject({
      computeId: null,
      deployedAt: null,
      secondsSinceDeployed: null,
      costPerHour: null,
      apiKeySecretId: null,
      userProfileId: 5,
    });
    const c = await findCompute(oneRow({ id: 9, name: 'gpu', price_per_hour: null, status_message: '' }), 9);
    expect(c).toMatchObject({ id: 9, name: 'gpu', pricePerHour: null, statusMessage: '' });
  });

  test('VectorstoreMeta: connection, secret, provider and the dates', async () => {
    const v = await findVectorstore(
      oneRow({
        id: 4,
        name: 'docs',
        backend: 'qdrant',
        hosting: 'self_hosted',
        is_active: 1,
        dimension: 1536,
        metric: 'cosine',
        deletion_protection: 0,
        connection_id: null,
        api_key_secret_id: null,
        embeddings_provider_id: null,
        embeddings_model: 'text-embedding-3-small',
        status: 'ready',
        index_name: '',
        endpoint_url: '',
        vector_count: 0,
        spec: null,
        deployed_at: null,
        last_snapshot_at: null,
        account_number: '1234-5678-9012',
      }),
      4,
    );
    expect(v).toMatchObject({
      connectionId: null,
      apiKeySecretId: null,
      embeddingsProviderId: null,
      deployedAt: null,
      lastSnapshotAt: null,
      spec: {},
    });
  });
});
