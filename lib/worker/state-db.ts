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
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ revoked: Object.fromEntries(revoked) }));
  fs.renameSync(tmp, file);
}
