/**
 * Celery's `--statedb`: revoked task ids survive a restart. A JSON file, written atomically (temp + rename);
 * entries older than Celery's CELERY_WORKER_REVOKE_EXPIRES (3 h) are dropped when read.
 */
import fs from 'node:fs';
import path from 'node:path';

export const REVOKE_EXPIRES_MS = 10_800_000;

export function loadRevoked(file: string, now: number = Date.now()): Map<string, number> {
  const out = new Map<string, number>();
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return out;
  }
  const revoked = (data as { revoked?: unknown } | null)?.revoked;
  if (typeof revoked !== 'object' || revoked === null) return out;
  for (const [id, t] of Object.entries(revoked)) {
    if (typeof t === 'number' && now - t < REVOKE_EXPIRES_MS) out.set(id, t);
  }
  return out;
}

export function saveRevoked(file: string, revoked: ReadonlyMap<string, number>): void {
  makeParents(path.dirname(file));
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ revoked: Object.fromEntries(revoked) }));
  fs.renameSync(tmp, file);
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
