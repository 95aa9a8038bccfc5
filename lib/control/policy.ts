/**
 * Which remote-control commands the worker obeys. Anyone who can publish to the broker can send them, and
 * Celery obeys them all; `inspect` keeps the read-only ones (ping, inspect, events) so `celery inspect`,
 * `celery status` and Flower still see the worker, and an explicit list adds back the changing commands
 * an operator wants (e.g. `revoke`).
 */

/** The commands that change what the worker does or whether it runs. */
export const CHANGING_COMMANDS = [
  'shutdown',
  'terminate',
  'rate_limit',
  'time_limit',
  'add_consumer',
  'cancel_consumer',
  'revoke',
] as const;
export type ChangingCommand = (typeof CHANGING_COMMANDS)[number];

export type ControlPolicy = { mode: 'all' } | { mode: 'inspect'; allow: readonly ChangingCommand[] };

const isChanging = (s: string): s is ChangingCommand => (CHANGING_COMMANDS as readonly string[]).includes(s);

/** `all`, `inspect`, or a comma-separated list of changing commands allowed beside inspect. */
export function parseControlPolicy(text: string): ControlPolicy {
  const items = text
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  if (items.length === 0) throw new Error(`expected all, inspect, or a list of: ${CHANGING_COMMANDS.join(', ')}`);
  if (items.length === 1 && items[0] === 'all') return { mode: 'all' };
  const allow: ChangingCommand[] = [];
  const unknown: string[] = [];
  for (const item of items) {
    if (item === 'inspect') continue;
    if (isChanging(item)) allow.push(item);
    else unknown.push(item);
  }
  if (unknown.length > 0) {
    throw new Error(
      `unknown control command(s) ${unknown.join(', ')}: expected all, inspect, or a list of: ${CHANGING_COMMANDS.join(', ')}`,
    );
  }
  return { mode: 'inspect', allow };
}

/** Why `method` is refused under `policy`, or null when it is obeyed. */
export function refusal(policy: ControlPolicy, method: string): string | null {
  if (policy.mode === 'all' || !isChanging(method) || policy.allow.includes(method)) return null;
  const allowed = policy.allow.length > 0 ? `inspect,${policy.allow.join(',')}` : 'inspect';
  return `control command ${method} is turned off on this worker (SMARTER_WORKER_CONTROL=${allowed})`;
}
