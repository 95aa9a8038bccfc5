/**
 * The cloud adapters as the worker builds them (`openCloud`, from the environment, in a process of their own, no
 * adapter injected), reaching the Qdrant and Pinecone stand-ins over HTTP the way the vectorstore backends do: the
 * per-target handle is resolved through a promise chain, then called. A handle that a promise takes for a thenable
 * ends such a process with an unhandled TypeError before any request is made.
 */
import { spawn } from 'node:child_process';
import { makeTestCa, type TestCa } from '../support/tls.js';
import { type PineconeStandIn, startPineconeStandIn } from '../support/pinecone-standin.js';
import { type QdrantStandIn, startQdrantStandIn } from '../support/qdrant-standin.js';

let ca: TestCa;
let qdrant: QdrantStandIn;
let pinecone: PineconeStandIn;

beforeAll(async () => {
  ca = await makeTestCa('wiring');
  qdrant = await startQdrantStandIn({ apiKey: 'qk' });
  pinecone = await startPineconeStandIn({ apiKey: 'pk', ca });
}, 60_000);
afterAll(async () => {
  await qdrant?.stop();
  await pinecone?.stop();
  ca?.remove();
});

function runChild(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'spec/support/cloud-wiring-main.ts'], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test("openCloud's Qdrant and Pinecone handles, resolved from a promise as the backends resolve them, reach the stand-ins", async () => {
  const collection = `wiring-${process.pid}`;
  const r = await runChild({
    QDRANT_URL: qdrant.url,
    QDRANT_KEY: 'qk',
    PINECONE_KEY: 'pk',
    COLLECTION: collection,
    SMARTER_WORKER_PINECONE_CONTROLLER_URL: pinecone.controllerUrl,
    NODE_EXTRA_CA_CERTS: ca.caFile,
  });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  expect(JSON.parse(r.stdout)).toEqual({ qdrantCount: 1, pineconeHasIndex: true });
  expect(qdrant.collections.get(collection)?.points.size).toBe(1);
  expect(pinecone.indexes.get(collection)?.namespaces.get('')?.size).toBe(1);
}, 60_000);
