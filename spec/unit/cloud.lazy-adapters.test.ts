/**
 * The cloud adapters `openCloud` builds stand for their clients until the first call. An async factory hands them
 * back (`await`, `Promise.resolve`, an async function's return), and a promise resolved with an object that has a
 * callable `then` adopts it as a thenable: the adapters must be plain objects with their port's methods only.
 */
import { Lazy } from '../../tasks/cloud/lazy.js';
import { LazyVectorDatabases } from '../../tasks/cloud/lazy-adapters.js';
import type { VectorDatabases, VectorDb } from '../../tasks/cloud/vectordb-port.js';
import { testCloud } from '../support/cloud.js';

const isThenable = (v: unknown): boolean =>
  v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';

/** What the worker does with an adapter: returns it from an async function and awaits that. */
async function handedBack<T>(v: T): Promise<T> {
  return (async () => v)();
}

describe('own wiring: the adapters openCloud builds from an environment of the test, as the worker builds them, nothing connected', () => {
  const cloud = testCloud();
  const adapters: [string, unknown][] = [
    ...Object.entries(cloud).filter(([k]) => k !== 'readiness' && k !== 'ledger'),
    ['vectordb.connect(…)', cloud.vectordb.connect({ url: 'http://127.0.0.1:1', apiKey: 'k' })],
    ['pinecone.connect(…)', cloud.pinecone.connect({ apiKey: 'k' })],
  ];

  test('there is one per port, and both per-target handles', () => {
    expect(adapters.map(([k]) => k).sort()).toEqual(
      [
        'acm',
        'autoscaling',
        'eks',
        'embeddings',
        'kube',
        'llm',
        'mailer',
        'mcp',
        'pinecone',
        'pinecone.connect(…)',
        'resolver',
        'route53',
        'vectordb',
        'vectordb.connect(…)',
      ].sort(),
    );
  });

  test.each(adapters)('%s is not a thenable and resolves to itself from an async function', async (_name, adapter) => {
    expect(isThenable(adapter)).toBe(false);
    expect('then' in (adapter as object)).toBe(false);
    await expect(handedBack(adapter)).resolves.toBe(adapter);
    await expect(Promise.resolve(adapter)).resolves.toBe(adapter);
  });
});

describe('own wiring: unit of Lazy (tasks/cloud/lazy.ts)', () => {
  test('makes once for concurrent and later calls', async () => {
    let made = 0;
    const lazy = new Lazy(async () => ({ n: ++made }));
    const [a, b] = await Promise.all([lazy.get(), lazy.get()]);
    expect(a).toBe(b);
    expect(await lazy.get()).toBe(a);
    expect(made).toBe(1);
  });

  test('a failed make is tried again on the next call', async () => {
    let calls = 0;
    const lazy = new Lazy(async () => {
      if (++calls === 1) throw new Error('no kubeconfig yet');
      return { ok: true };
    });
    await expect(lazy.get()).rejects.toThrow('no kubeconfig yet');
    await expect(lazy.get()).resolves.toEqual({ ok: true });
    expect(calls).toBe(2);
  });

  test('a per-target handle makes the client on its first call only, and forwards the call', async () => {
    let made = 0;
    const calls: string[] = [];
    const db = { health: async () => void calls.push('health') } as unknown as VectorDb;
    const dbs = new LazyVectorDatabases(
      new Lazy<VectorDatabases>(async () => {
        made++;
        return { connect: () => db };
      }),
    );
    const handle = await handedBack(dbs.connect({ url: 'http://q:6333' }));
    expect(made).toBe(0);
    await handle.health();
    await handle.health();
    expect(made).toBe(1);
    expect(calls).toEqual(['health', 'health']);
  });
});
