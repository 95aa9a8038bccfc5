import { loadConfig } from '../../lib/config/settings.js';
import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';
import { CHANGING_COMMANDS, parseControlPolicy, refusal } from '../../lib/control/policy.js';

test('SMARTER_WORKER_CONTROL=all (the default) obeys every command, as Celery', () => {
  const { values } = loadConfig(WORKER_SETTINGS, {});
  expect(values.control).toEqual({ mode: 'all' });
  for (const c of [...CHANGING_COMMANDS, 'ping', 'stats']) expect(refusal(values.control, c)).toBeNull();
});

test('inspect refuses each of the seven changing commands by name and keeps ping, inspect and events', () => {
  const p = parseControlPolicy('inspect');
  for (const c of CHANGING_COMMANDS) {
    expect(refusal(p, c)).toBe(`control command ${c} is turned off on this worker (SMARTER_WORKER_CONTROL=inspect)`);
  }
  for (const c of [
    'ping',
    'stats',
    'active',
    'reserved',
    'scheduled',
    'revoked',
    'registered',
    'conf',
    'report',
    'active_queues',
    'clock',
    'hello',
    'heartbeat',
    'enable_events',
    'disable_events',
  ]) {
    expect(refusal(p, c)).toBeNull();
  }
});

test('an explicit list allows those changing commands on top of inspect, and no others', () => {
  const p = parseControlPolicy(' Revoke, rate_limit ');
  expect(refusal(p, 'revoke')).toBeNull();
  expect(refusal(p, 'rate_limit')).toBeNull();
  expect(refusal(p, 'shutdown')).toContain('SMARTER_WORKER_CONTROL=inspect,revoke,rate_limit');
  expect(refusal(p, 'ping')).toBeNull();
});

test('an unknown or empty value is a configuration problem naming the choices', () => {
  const { problems } = (() => {
    try {
      loadConfig(WORKER_SETTINGS, { SMARTER_WORKER_CONTROL: 'inspect,reboot' });
      return { problems: [] as string[] };
    } catch (err) {
      return err as { problems: string[] };
    }
  })();
  expect(problems.join('\n')).toMatch(/SMARTER_WORKER_CONTROL.*unknown control command\(s\) reboot/);
  expect(() => parseControlPolicy(' , ')).toThrow(/expected all, inspect, or a list of: shutdown, terminate/);
});
