/**
 * The cloud adapters `openCloud` builds stand for their clients until the first call. An async factory hands them
 * back (`await`, `Promise.resolve`, an async function's return), and a promise resolved with an object that has a
 * callable `then` adopts it as a thenable: the adapters must be plain objects with their port's methods only.
 */
import { Lazy } from '../../tasks/cloud/lazy.js';
import { forwarding, lazyVectorDatabases } from '../../tasks/cloud/lazy-adapters.js';
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
    const dbs = lazyVectorDatabases(
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

describe('own wiring: unit of forwarding (tasks/cloud/lazy-adapters.ts)', () => {
  interface Port {
    add(a: number, b: number): Promise<number>;
    name(): Promise<string>;
  }

  test('holds exactly the listed methods, and each calls the client made once, with its arguments and as its method', async () => {
    let made = 0;
    const client = {
      label: 'kube',
      async add(a: number, b: number) {
        return a + b;
      },
      async name() {
        return this.label;
      },
    };
    const port = forwarding<Port>(
      new Lazy(async () => {
        made++;
        return client;
      }),
      { add: true, name: true },
    );
    expect(Object.keys(port).sort()).toEqual(['add', 'name']);
    expect(made).toBe(0);
    await expect(port.add(2, 3)).resolves.toBe(5);
    await expect(port.name()).resolves.toBe('kube');
    expect(made).toBe(1);
  });

  test('a client that fails to be made fails the call, and the next call makes it again', async () => {
    let calls = 0;
    const port = forwarding<Port>(
      new Lazy(async () => {
        if (++calls === 1) throw new Error('no credentials yet');
        return { add: async (a: number, b: number) => a * b, name: async () => 'x' };
      }),
      { add: true, name: true },
    );
    await expect(port.add(2, 3)).rejects.toThrow('no credentials yet');
    await expect(port.add(2, 3)).resolves.toBe(6);
  });
});
