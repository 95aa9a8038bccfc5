import { createLogger, lazyChild } from '../../lib/logger.js';

test('level checks follow a change of the logger level (they are remembered per level), children included', () => {
  const logger = createLogger({ level: 'warn', silent: true });
  const child = lazyChild(logger, () => ({ task: 't' }));
  expect(logger.isLevelEnabled('info')).toBe(false);
  expect(child.isLevelEnabled('info')).toBe(false);
  expect(logger.isLevelEnabled('error')).toBe(true);
  (logger as unknown as { level: string }).level = 'debug';
  expect(logger.isLevelEnabled('info')).toBe(true);
  expect(child.isLevelEnabled('debug')).toBe(true);
  expect(logger.child({ a: 1 }).isLevelEnabled('debug')).toBe(true);
  (logger as unknown as { level: string }).level = 'error';
  expect(logger.isLevelEnabled('warn')).toBe(false);
});
