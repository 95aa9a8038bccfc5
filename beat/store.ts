/**
 * Where Beat remembers when each entry last ran, so that a restart neither bursts every entry nor skips one:
 * a JSON file by default (Celery's `celerybeat-schedule`, without pickle), or a Redis hash, like RedBeat, which
 * every replica shares. Each send is recorded at once.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { Redis } from 'ioredis';
import type { BeatEntry } from '../tasks/beat-schedule.js';

export interface EntryState {
  lastRunAt: number;
  totalRunCount: number;
}

export interface ScheduleStore {
  load(): Promise<Map<string, EntryState>>;
  save(name: string, state: EntryState): Promise<void>;
  close(): Promise<void>;
  readonly description: string;
}

/** One entry as the scheduler sees it on a tick: what to send, and its last run (null: never, so due at once). */
export interface PlannedEntry {
  entry: BeatEntry;
  state: EntryState | null;
  enabled: boolean;
}

/**
 * What the scheduler asks of where the schedule lives: `install` when it takes the lock (the entries it ships),
 * `plan` on each tick (every entry to consider, as of now), `ran` after each send.
 */
export interface EntryStore {
  readonly description: string;
  install(statics: BeatEntry[], now: number): Promise<void>;
  plan(): Promise<PlannedEntry[]>;
  ran(entry: BeatEntry, state: EntryState): Promise<void>;
  close(): Promise<void>;
}

/**
 * The shipped entries over a store of last runs (file or hash): the store is read when the lock is taken
 * (another replica may have sent), and new entries start then, as in Celery.
 */
export class KeptState implements EntryStore {
  private state = new Map<string, EntryState>();
  private statics: BeatEntry[] = [];
  constructor(private readonly store: ScheduleStore) {}

  get description(): string {
    return this.store.description;
  }

  async install(statics: BeatEntry[], now: number): Promise<void> {
    this.statics = statics;
    this.state = await this.store.load();
    for (const e of statics) {
      if (!this.state.has(e.name)) {
        const s = { lastRunAt: now, totalRunCount: 0 };
        this.state.set(e.name, s);
        await this.store.save(e.name, s);
      }
    }
  }

  plan(): Promise<PlannedEntry[]> {
    return Promise.resolve(
      this.statics.map((entry) => ({ entry, state: this.state.get(entry.name) ?? null, enabled: true })),
    );
  }

  async ran(entry: BeatEntry, state: EntryState): Promise<void> {
    this.state.set(entry.name, state);
    await this.store.save(entry.name, state);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

interface Persisted {
  last_run_at: string;
  total_run_count: number;
}

/** One entry's persisted state, or null (with a note) when it is unreadable. */
function decode(name: string, value: unknown): EntryState | null {
  const p = (typeof value === 'object' && value !== null ? value : {}) as Partial<Persisted>;
  const at = Date.parse(String(p.last_run_at));
  if (Number.isNaN(at)) {
    process.stderr.write(`smarter-beat: ignoring an unreadable state for ${name}\n`);
    return null;
  }
  return { lastRunAt: at, totalRunCount: Number(p.total_run_count ?? 0) };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const encode = (s: EntryState): Persisted => ({
  last_run_at: new Date(s.lastRunAt).toISOString(),
  total_run_count: s.totalRunCount,
});

export class FileStore implements ScheduleStore {
  private state = new Map<string, EntryState>();
  constructor(private readonly path: string) {}

  get description(): string {
    return `file ${this.path}`;
  }

  async load(): Promise<Map<string, EntryState>> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return (this.state = new Map());
      throw err;
    }
    const raw = JSON.parse(text) as { entries?: Record<string, unknown> };
    this.state = new Map();
    for (const [name, v] of Object.entries(raw.entries ?? {})) {
      const s = decode(name, v);
      if (s) this.state.set(name, s);
    }
    return new Map(this.state);
  }

  async save(name: string, state: EntryState): Promise<void> {
    this.state.set(name, state);
    const entries = Object.fromEntries([...this.state].map(([k, v]) => [k, encode(v)]));
    // Write then rename: a crash never leaves half a file.
    const tmp = `${this.path}.tmp`;
    await writeFile(tmp, `${JSON.stringify({ version: 1, entries }, null, 2)}\n`);
    await rename(tmp, this.path);
  }

  async close(): Promise<void> {}
}

/** The hash of last runs smarter-beat kept in Redis before it kept RedBeat's keys (read once, on upgrade). */
export const LEGACY_REDIS_KEY = 'smarter-beat:schedule';

/** One entry's last run in the legacy hash, or null. */
export async function legacyState(redis: Redis, key: string, name: string): Promise<EntryState | null> {
  const text = await redis.hget(key, name);
  return text === null ? null : decode(name, parse(text));
}

export class RedisStore implements ScheduleStore {
  private readonly redis: Redis;
  constructor(
    url: string,
    private readonly key = LEGACY_REDIS_KEY,
  ) {
    this.redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
  }

  get description(): string {
    return `redis hash ${this.key}`;
  }

  async load(): Promise<Map<string, EntryState>> {
    const all = await this.redis.hgetall(this.key);
    const out = new Map<string, EntryState>();
    for (const [name, text] of Object.entries(all)) {
      const s = decode(name, parse(text));
      if (s) out.set(name, s);
    }
    return out;
  }

  async save(name: string, state: EntryState): Promise<void> {
    await this.redis.hset(this.key, name, JSON.stringify(encode(state)));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
