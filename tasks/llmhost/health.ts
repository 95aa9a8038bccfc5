/**
 * Smarter's `HealthProber.check` and the `LLMHost` model's uptime and cost (`smarter/apps/llmhost/services/
 * observability.py`, `models/llmhost.py`): an LLMHost is healthy when its health URL answers 2xx within
 * `HEALTH_CHECK_TIMEOUT_SECONDS`; no answer, or any other status, is unhealthy.
 */
import { Dec } from '../db/decimal.js';
import { DEPLOYED_STATUSES } from './const.js';
import type { LlmhostRow } from './rows.js';

export const HEALTH_CHECK_TIMEOUT_SECONDS = 5;

export async function probeHealth(url: string, timeoutSeconds = HEALTH_CHECK_TIMEOUT_SECONDS): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutSeconds * 1000) });
    await res.body?.cancel();
    return res.status >= 200 && res.status < 300;
  } catch {
    return false;
  }
}

/** `LLMHost.uptime_hours`: `round(hours since deployed_at, 4)` while deployed, else None. */
export function uptimeHours(host: Pick<LlmhostRow, 'status' | 'secondsSinceDeployed'>): number | null {
  if (!DEPLOYED_STATUSES.includes(host.status) || host.secondsSinceDeployed === null) return null;
  return Number((host.secondsSinceDeployed / 3600).toFixed(4));
}

/** `LLMHost.estimated_cost`: `Decimal(str(uptime_hours)) × replicas × cost_per_hour`, to 4 places, as text; None without either. */
export function estimatedCost(
  host: Pick<LlmhostRow, 'status' | 'secondsSinceDeployed' | 'replicas' | 'costPerHour'>,
): string | null {
  const hours = uptimeHours(host);
  if (hours === null || host.costPerHour === null) return null;
  return Dec.of(hours).mul(Dec.of(host.replicas)).mul(Dec.of(host.costPerHour)).quantize(4).toString();
}
