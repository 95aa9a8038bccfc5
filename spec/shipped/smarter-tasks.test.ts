/**
 * What ships, run as the chart runs it: `node dist/tasks/main.js` twice (the operational Deployment on
 * default_celery_task_queue, the infrastructure one on infrastructure_celery_task_queue) and `node dist/beat/main.js`,
 * each with the command, arguments and environment `helm template` renders for it (spec/support/chart.ts),
 * given only addresses: a RabbitMQ vhost of their own, MariaDB, Redis, moto, the Kubernetes stand-in through a
 * kubeconfig, DNS, SMTP, Qdrant, Pinecone, embeddings, LLM and MCP servers. Debian's Python Celery sends every one
 * of Smarter's 39 task names with protocol 1 and Smarter's argument shapes (smarter-contract.md §3, §5); each test
 * asserts Smarter's outcome where Smarter leaves it, then that no process died. Then every name again with bad
 * arguments: each message settles (a stored failure or success, or a dead letter with its reason), none is lost
 * or left unacknowledged, and the processes are still up. The cases, one per name, are in
 * spec/support/shipped-cases-*.ts; the world and its processes in spec/support/shipped-suite.ts.
 */
import { spawn } from 'node:child_process';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { PYTHON } from '../support/python-worker.js';
import { waitFor } from '../support/wait.js';
import { execFileSyncText, OP, INFRA, P, DUE_ENTRIES, w, redis, beatPrefix } from '../support/shipped-suite.js';
import { type Send, python, meta, TERMINAL, settled, rows, one, everyProcessAlive } from '../support/shipped-suite.js';
import { op, infra } from '../support/shipped-suite.js';
import { vsA, vsB, vsP, pineconeIndex, shippedSuiteForFile } from '../support/shipped-suite.js';
import { type Case, type Prepared } from '../support/shipped-case-helpers.js';
import { OPERATIONAL_CASES } from '../support/shipped-cases-operational.js';
import { VECTORSTORE_CASES } from '../support/shipped-cases-vectorstore.js';
import { LLMCLIENT_CASES } from '../support/shipped-cases-llmclient.js';
import { LLMHOST_CASES } from '../support/shipped-cases-llmhost.js';

shippedSuiteForFile();

const CASES: Case[] = [...OPERATIONAL_CASES, ...VECTORSTORE_CASES, ...LLMCLIENT_CASES, ...LLMHOST_CASES];

describe('Beat, started from the chart', () => {
  test("sends its due entries: RedBeat's meta counts the run, and the infrastructure worker acts on it (collections, index, inventory)", async () => {
    for (const e of DUE_ENTRIES) {
      expect(await redis.hget(`${beatPrefix}${e}`, 'meta')).toMatch(/"total_run_count": 8\b/);
    }
    // reconcile-vectorstores created each vectorstore's collection on its own server, with its own key.
    expect(w.qdrant.collections.has('handbook-a')).toBe(true);
    expect([...w.qdrantB.collections.keys()]).toHaveLength(1);
    expect(w.pinecone.indexes.has(pineconeIndex)).toBe(true);
    const statuses = await Promise.all(
      [vsA, vsB, vsP].map(async (v) =>
        one('SELECT status, status_message FROM vectorstore_vectorstoremeta WHERE id = ?', [v.id]),
      ),
    );
    expect(statuses).toEqual([0, 1, 2].map(() => ({ status: 'ready', status_message: '' })));
    // sync-infrastructure-inventory recorded the cluster's volume in the ledger.
    const ledger = await rows('SELECT resource_name, resource_id FROM infrastructure_infrastructureresource');
    expect(JSON.stringify(ledger)).toContain('vol-0shipped');
    everyProcessAlive();
  });
});

/** The 39 names and queues the shipped binary declares (`smarter-worker tasks --contract`). */
let declaredNames: Map<string, string> | undefined;
function contract(): Map<string, string> {
  if (declaredNames) return declaredNames;
  const out = execFileSyncText(process.execPath, ['dist/tasks/main.js', 'tasks', '--contract']);
  const names = new Map<string, string>();
  for (const line of out.split('\n')) {
    const m = /^(smarter\.apps\.\S+)\s+(operational|infrastructure) \(([^)]+)\)/.exec(line);
    if (m?.[1] && m[3]) names.set(m[1], m[3]);
  }
  declaredNames = names;
  return names;
}

const sent = new Map<string, { id: string; prepared: Prepared }>();
const outcomes = new Map<string, { state: string; error: unknown }>();

describe("Smarter's 39 task names, sent by Python Celery (protocol 1) to the shipped workers", () => {
  let declared: Map<string, string>;

  beforeAll(async () => {
    declared = contract();
    for (const phase of [1, 2, 3] as const) {
      const cases = CASES.filter((c) => c.phase === phase);
      const prepared = new Map<string, Prepared>();
      for (const c of cases) prepared.set(c.task, await c.prepare());
      const ids = await python(
        cases.map((c) => {
          const p = prepared.get(c.task);
          return {
            key: c.task,
            name: P + c.task,
            queue: declared.get(P + c.task) ?? '?',
            args: p?.args,
            kwargs: p?.kwargs,
          };
        }),
      );
      for (const c of cases) sent.set(c.task, { id: ids[c.task] ?? '', prepared: prepared.get(c.task) as Prepared });
      // A case that fails here fails its own test below, not the others.
      const meanwhile = new Map<string, unknown>();
      await Promise.all([
        ...cases.map((c) =>
          sent
            .get(c.task)
            ?.prepared.meanwhile?.()
            .catch((err: unknown) => meanwhile.set(c.task, err)),
        ),
        ...cases.map((c) => settled(sent.get(c.task)?.id ?? '').catch(() => undefined)),
      ]);
      // Each outcome is read before the next phase acts on it (aggregate_records rolls up the charges,
      // destroy_llmhost removes what launch_llmhost applied).
      await Promise.all(
        cases.map(async (c) => {
          const s = sent.get(c.task);
          if (!s) return;
          const m = await meta(s.id);
          if (!m || !TERMINAL.includes(m.status)) {
            outcomes.set(c.task, { state: m?.status ?? 'no result', error: new Error(`${c.task} did not settle`) });
            return;
          }
          const error =
            meanwhile.get(c.task) ??
            (await s.prepared.check(m).then(
              () => null,
              (err: unknown) => err,
            ));
          outcomes.set(c.task, { state: m.status, error });
        }),
      );
    }
  }, 300_000);

  test('the cases cover exactly the names the binary declares, each sent to the queue it declares', () => {
    expect(declared.size).toBe(39);
    expect(new Set(CASES.map((c) => P + c.task))).toEqual(new Set(declared.keys()));
    expect(new Set(declared.values())).toEqual(new Set([OP, INFRA]));
  });

  test.each(CASES.map((c) => [c.task]))("%s: Smarter's outcome", async (task) => {
    const s = sent.get(task);
    if (!s) throw new Error(`${task} was not sent`);
    const o = outcomes.get(task);
    expect({ task, state: o?.state }).toEqual({ task, state: s.prepared.state });
    if (o?.error) throw o.error instanceof Error ? o.error : new Error(JSON.stringify(o.error));
  });

  test('every process is still running', () => everyProcessAlive());

  // lib/app/heap-growth.ts: set by the entry point, so only the built binary shows it.
  test("both workers bound V8's heap growth as they start, their command line giving none", () => {
    for (const p of [op, infra]) {
      expect(p.logs().find((l) => l.message === 'smarter-worker starting')).toMatchObject({
        v8: '--heap-growing-percent=100 --semi-space-growth-factor=1',
      });
    }
  });
});

// The chart starts both workers with -E and --http-port: task events go out in task.multi lists (as Celery's worker
// buffers them), through the fan-out that also feeds the metrics.
describe("Celery's event receiver (what Flower and celery events use) on the shipped operational worker", () => {
  test('sees task-received, task-started and task-succeeded of a task it ran, in order, from the worker', async () => {
    const py = spawn(PYTHON, ['spec/interop/python/events.py', w.brokerUrl, '4'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    py.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((r) => py.once('exit', r));
    await waitFor(() => out.includes('listening'), 15_000, { stepMs: 100, what: 'the receiver listening' });
    const ids = await python([{ key: 'sum', name: 'celery.accumulate', queue: OP, args: [2, 3], kwargs: {} }]);
    await exited;
    const events = JSON.parse(out.split('\n').filter(Boolean).pop() ?? '[]') as Array<Record<string, unknown>>;
    const mine = events.filter((e) => e.uuid === ids['sum']);
    expect(mine.map((e) => e.type)).toEqual(['task-received', 'task-started', 'task-succeeded']);
    expect(mine[2]).toMatchObject({ result: '[2, 3]' });
    expect(String(mine[0]?.hostname)).toMatch(/^worker@/);
  }, 30_000);
});

// ---------------------------------------------------------------------------------------------------------------
// Bad input through the binary: every name, every kind of bad argument.

interface DeadLetter {
  id: string;
  task: string;
  reason: string;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : Buffer.isBuffer(v) ? v.toString('utf8') : '');

/** The dead letters of `queue`, read and put back (the channel closes without acking them). */
async function deadLetters(queue: string): Promise<DeadLetter[]> {
  const conn = await amqp.connect(w.brokerUrl);
  conn.on('error', () => undefined);
  const out: DeadLetter[] = [];
  try {
    const ch = await conn.createChannel();
    // A queue nothing was dead-lettered to does not exist: the get is refused with 404 and the channel closes.
    ch.on('error', () => undefined);
    for (;;) {
      const msg = await ch.get(queue, { noAck: false });
      if (msg === false) break;
      const headers = (msg.properties.headers ?? {}) as Record<string, unknown>;
      let body: { id?: unknown; task?: unknown } = {};
      try {
        body = JSON.parse(msg.content.toString('utf8')) as typeof body;
      } catch {
        // an undecodable body keeps its id in the properties
      }
      out.push({
        id: String(msg.properties.correlationId ?? headers.id ?? body.id ?? ''),
        task: text(headers.task) || text(body.task),
        reason: text(headers['x-dead-letter-reason']),
      });
    }
  } finally {
    await conn.close().catch(() => undefined);
  }
  return out;
}

const OVERSIZED = 'x'.repeat(200_000);

describe('bad arguments for each of the 39 names, through the shipped workers', () => {
  const messages: Array<{ key: string; task: string; label: string; id: string }> = [];
  const outcome = new Map<string, string>();
  let dead: DeadLetter[] = [];

  beforeAll(async () => {
    const batch: Send[] = [];
    for (const c of CASES) {
      const takesArguments = Boolean(
        sent.get(c.task)?.prepared.args?.length ?? Object.keys(sent.get(c.task)?.prepared.kwargs ?? {}).length,
      );
      const bad: Array<[string, Pick<Send, 'args' | 'kwargs'>]> = [
        // A task that takes no arguments is given one too many instead.
        takesArguments ? ['missing', { args: [], kwargs: {} }] : ['surplus positional', { args: [1, 2, 3] }],
        ['None', { args: [null] }],
        ['wrong type', { args: [{ nested: ['not', 'an', 'id'] }], kwargs: {} }],
        ['unknown id', { args: [987654321] }],
        ['oversized string', { args: [OVERSIZED] }],
        ['extra kwargs', { kwargs: { no_such_argument: true, attempt: 'many' } }],
      ];
      for (const [label, a] of bad) {
        batch.push({ key: `${c.task} / ${label}`, name: P + c.task, queue: contract().get(P + c.task) ?? '?', ...a });
      }
    }
    const ids = await python(batch);
    for (const b of batch) {
      messages.push({ key: b.key, task: b.name, label: b.key.split(' / ')[1] ?? '', id: ids[b.key] ?? '' });
    }
    const deadLetterQueues = [`${OP}.dead_letter`, `${INFRA}.dead_letter`];
    await waitFor(
      async () => {
        everyProcessAlive();
        dead = (await Promise.all(deadLetterQueues.map((q) => deadLetters(q).catch(() => [])))).flat();
        const deadIds = new Set(dead.map((d) => d.id));
        for (const m of messages) {
          if (outcome.has(m.id)) continue;
          const r = await meta(m.id);
          if (r && TERMINAL.includes(r.status)) outcome.set(m.id, r.status);
          else if (deadIds.has(m.id)) outcome.set(m.id, 'DEAD_LETTER');
        }
        return outcome.size === messages.length;
      },
      150_000,
      1000,
    ).catch(() => undefined);
  }, 240_000);

  test('every message settles: a stored result or a dead letter with its reason; none lost, none left unacknowledged', async () => {
    const counts: Record<string, number> = {};
    for (const m of messages) {
      const o = outcome.get(m.id) ?? 'UNSETTLED';
      counts[o] = (counts[o] ?? 0) + 1;
    }
    const deadIds = new Set(dead.map((d) => d.id));
    const settledCount = messages.length - (counts.UNSETTLED ?? 0);
    process.stdout.write(
      `bad input: ${messages.length} sent (${CASES.length} names × 6), ${settledCount} settled: ${JSON.stringify(counts)}; ` +
        `dead letters with a reason: ${dead.filter((d) => deadIds.has(d.id) && d.reason).length}\n`,
    );
    expect(messages).toHaveLength(CASES.length * 6);
    expect(messages.filter((m) => !outcome.has(m.id)).map((m) => m.key)).toEqual([]);
    const ours = new Set(messages.map((m) => m.id));
    expect(dead.filter((d) => ours.has(d.id) && d.reason === '')).toEqual([]);
    // Checks that reschedule themselves (a node group still scaling, a domain checked again) hold a message for
    // a moment; once they end, both queues are empty with nothing unacknowledged.
    const idle = (queues: Map<string, { messages: number; unacked: number }>) =>
      [OP, INFRA].map((q) => ({ q, ...queues.get(q) }));
    const quiet = [OP, INFRA].map((q) => ({ q, messages: 0, unacked: 0 }));
    let queues = await w.queues();
    await waitFor(
      async () => {
        queues = await w.queues();
        return JSON.stringify(idle(queues)) === JSON.stringify(quiet);
      },
      60_000,
      1000,
    ).catch(() => undefined);
    expect(idle(queues)).toEqual(quiet);
    for (const q of [`${OP}.dead_letter`, `${INFRA}.dead_letter`]) expect(queues.get(q)?.unacked ?? 0).toBe(0);
  });

  test('every process is still running and healthy', () => everyProcessAlive());
});
