/**
 * A write Redis refuses for memory is held, not failed: the broker is blocked (told once), one probe with backoff
 * finds when Redis takes writes again, then the held write is sent again, once; a close while it is held fails it.
 */
import { WriteBlock } from '../../lib/broker/redis/write-block.js';
import { BrokerError } from '../../lib/errors.js';
import { type LogLine, recordingLogger } from '../support/logs.js';

const OOM = () => Promise.reject(new Error("OOM command not allowed when used memory > 'maxmemory'."));

test('a refused write waits for the probe, then is sent again once; told at block and at unblock', async () => {
  const lines: LogLine[] = [];
  let full = true;
  let probes = 0;
  const writes = new WriteBlock(
    recordingLogger(lines),
    () => (probes++ < 2 ? OOM() : ((full = false), Promise.resolve('OK'))),
    () => false,
  );
  let sent = 0;
  const write = () => (full ? OOM() : Promise.resolve(++sent));
  const held = [writes.write(write), writes.write(write), writes.write(write)];
  await new Promise((r) => setTimeout(r, 50));
  expect(writes.blocked?.reason).toMatch(/^OOM command not allowed/);
  expect(await Promise.all(held)).toEqual([1, 2, 3]);
  expect(sent).toBe(3);
  expect(probes).toBe(3);
  expect(writes.blocked).toBeUndefined();
  expect(lines.map((l) => l.message.replace(/[\d.]+ s/, 'N s'))).toEqual([
    "broker blocked publishing (OOM command not allowed when used memory > 'maxmemory'.): publishes wait for Redis to take writes",
    "broker unblocked after N s blocked (OOM command not allowed when used memory > 'maxmemory'.)",
  ]);
});

test('any other failure is the write’s own; a close while a write is held fails it without sending it', async () => {
  let closing = false;
  const writes = new WriteBlock(recordingLogger(), OOM, () => closing);
  await expect(writes.write(() => Promise.reject(new Error('Connection is closed.')))).rejects.toThrow(
    'Connection is closed.',
  );
  let tries = 0;
  const held = writes.write(() => (tries++, OOM()));
  await new Promise((r) => setTimeout(r, 50));
  closing = true;
  writes.stop();
  await expect(held).rejects.toBeInstanceOf(BrokerError);
  expect(tries).toBe(1);
});
