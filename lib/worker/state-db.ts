/**
 * Celery's `--statedb`: revoked task ids survive a restart. A JSON file, written atomically (temp + rename);
 * entries older than Celery's CELERY_WORKER_REVOKE_EXPIRES (3 h) are dropped when read. It also keeps the
 * publishes a shutdown could not send (publish-hold.ts), to be sent at the next start; each writer keeps the
 * other's part of the file.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { HeldPublish } from './publish-hold.js';

export const REVOKE_EXPIRES_MS = 10_800_000;

interface StateFile {
  revoked?: unknown;
  held?: unknown;
}

function readState(file: string): StateFile {
  try {
    const data: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return typeof data === 'object' && data !== null ? data : {};
  } catch {
    return {};
  }
}

function writeState(file: string, state: StateFile): void {
  makeParents(path.dirname(file));
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(state));
  fs.renameSync(tmp, file);
}

export function loadRevoked(file: string, now: number = Date.now()): Map<string, number> {
  const out = new Map<string, number>();
  const revoked = readState(file).revoked;
  if (typeof revoked !== 'object' || revoked === null) return out;
  for (const [id, t] of Object.entries(revoked)) {
    if (typeof t === 'number' && now - t < REVOKE_EXPIRES_MS) out.set(id, t);
  }
  return out;
}

export function saveRevoked(file: string, revoked: ReadonlyMap<string, number>): void {
  const { held } = readState(file);
  writeState(file, { revoked: Object.fromEntries(revoked), ...(held !== undefined ? { held } : {}) });
}

/**
 * Bodies as base64; headers as JSON, where a Buffer (an AMQP byte array) comes back as a Buffer and a
 * date as its ISO text.
 */
function revive(_key: string, v: unknown): unknown {
  const o = v as { type?: unknown; data?: unknown } | null;
  if (typeof o === 'object' && o !== null && o.type === 'Buffer' && Array.isArray(o.data)) {
    return Buffer.from(o.data as number[]);
  }
  return v;
}

function plain(_key: string, v: unknown): unknown {
  return typeof v === 'bigint' ? v.toString() : v;
}

/** Publishes written at the last shutdown; [] when there are none (or the file cannot be read). */
export function loadHeld(file: string): HeldPublish[] {
  const held = readState(file).held;
  if (!Array.isArray(held)) return [];
  const out: HeldPublish[] = [];
  for (const h of held as unknown[]) {
    if (typeof h !== 'string') continue;
    try {
      const p = JSON.parse(h, revive) as HeldPublish & { body: unknown };
      if (typeof p.body === 'string' && typeof p.id === 'string' && typeof p.kind === 'string') {
        out.push({ ...p, body: Buffer.from(p.body, 'base64') });
      }
    } catch {
      /* one unreadable entry does not keep the others */
    }
  }
  return out;
}

/** Replaces the held publishes of the file (none: removes them), keeping its revoked ids. */
export function saveHeld(file: string, held: readonly HeldPublish[]): void {
  const { revoked } = readState(file);
  const entries = held.map((p) => JSON.stringify({ ...p, body: p.body.toString('base64') }, plain));
  writeState(file, { ...(revoked !== undefined ? { revoked } : {}), ...(entries.length > 0 ? { held: entries } : {}) });
}

/**
 * `mkdir -p` one level at a time: Node 20's `mkdirSync(dir, { recursive: true })` never returns for some paths
 * it cannot create (under /proc it spins at full CPU), which turned a bad --statedb into a worker that could
 * not shut down.
 */
function makeParents(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !fs.existsSync(d); d = path.dirname(d)) {
    missing.unshift(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing) fs.mkdirSync(d);
}
