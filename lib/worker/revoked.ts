/**
 * Revoked task ids: bounded as Celery's (CELERY_WORKER_REVOKES_MAX, 50,000; the oldest go first) and,
 * with `--statedb`, persisted across restarts (state-db.ts drops entries older than 3 h when read).
 */
import { ConfigError, coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { REVOKE_EXPIRES_MS, loadRevoked, saveRevoked } from './state-db.js';

export const REVOKES_MAX = 50_000;

/** What remote control reads of it. */
export interface RevokedView {
  has(id: string): boolean;
  /** Ids with when they were revoked (epoch ms), oldest first. */
  entries(): IterableIterator<[string, number]>;
  ids(): string[];
  readonly size: number;
}

export class RevokedSet implements RevokedView {
  private readonly byId = new Map<string, number>();
  /** The state file was read: a write before would replace its ids with the few learnt before (mingle). */
  private loaded = false;

  constructor(
    private readonly file: string | null,
    private readonly logger: Logger,
    private readonly max = REVOKES_MAX,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  entries(): IterableIterator<[string, number]> {
    return this.byId.entries();
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  /** Reads the state file, if there is one, and proves it can be written (Celery fails at start when it cannot). */
  load(): void {
    if (!this.file) return;
    this.readFile(this.file);
    try {
      saveRevoked(this.file, this.byId);
    } catch (err) {
      throw new ConfigError([
        `CELERY_WORKER_STATE_DB / --statedb: cannot write ${this.file}: ${coerceError(err).message}`,
      ]);
    }
  }

  /** Merges the file's ids into what is known (a later time wins). */
  private readFile(file: string): void {
    for (const [id, t] of loadRevoked(file, this.now())) if ((this.byId.get(id) ?? 0) < t) this.byId.set(id, t);
    this.loaded = true;
  }

  /** Remembers an id as revoked now (moved to the newest end if it was there). */
  add(id: string): void {
    this.byId.delete(id);
    this.byId.set(id, this.now());
    while (this.byId.size > this.max) {
      const oldest = this.byId.keys().next().value;
      if (oldest === undefined) break;
      this.byId.delete(oldest);
    }
  }

  /**
   * Celery's `revoked.update(...)` with what another worker knows (mingle `hello`): ids with when they were
   * revoked (epoch ms). An id already known keeps the later time; one older than Celery's revoke expiry (3 h)
   * is not taken. Returns how many ids were new here.
   */
  merge(entries: Iterable<readonly [string, number]>): number {
    const now = this.now();
    let added = 0;
    for (const [id, t] of entries) {
      if (!Number.isFinite(t) || now - t >= REVOKE_EXPIRES_MS) continue;
      const known = this.byId.get(id);
      if (known === undefined) added++;
      if (known === undefined || known < t) {
        this.byId.delete(id);
        this.byId.set(id, t);
      }
    }
    while (this.byId.size > this.max) {
      const oldest = this.byId.keys().next().value;
      if (oldest === undefined) break;
      this.byId.delete(oldest);
    }
    return added;
  }

  /** Celery's `revoked_stamps`: stamp name → the values revoked (`revoke_by_stamped_headers`), kept in memory. */
  private readonly stamps = new Map<string, Set<string>>();

  addStamps(headers: Readonly<Record<string, readonly string[]>>): void {
    for (const [k, values] of Object.entries(headers)) {
      const set = this.stamps.get(k) ?? new Set<string>();
      for (const v of values) set.add(v);
      this.stamps.set(k, set);
    }
  }

  /** The revoked stamp a message carries (Celery's `Request.revoked`: its stamped headers, in order), or null. */
  stampOf(msg: { stampedHeaders: readonly string[] | null; stamps: Readonly<Record<string, unknown>> }): string | null {
    if (this.stamps.size === 0 || !msg.stampedHeaders) return null;
    for (const k of msg.stampedHeaders) {
      const revoked = this.stamps.get(k);
      if (!revoked) continue;
      const have = msg.stamps[k];
      for (const v of Array.isArray(have) ? have : [have]) if (revoked.has(String(v))) return `${k}=${String(v)}`;
    }
    return null;
  }

  /** Writes the state file, if there is one; a failure is logged, never thrown. */
  persist(): void {
    if (!this.file) return;
    try {
      if (!this.loaded) this.readFile(this.file);
      saveRevoked(this.file, this.byId);
    } catch (err) {
      this.logger.error(`could not write the state file ${this.file}`, { error: coerceError(err).message });
    }
  }
}
