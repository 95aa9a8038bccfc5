/** The registry's stubs (lib/registry/task-stubs.ts): tasks known by name and queue, their code loaded on first use. */
import * as z from 'zod';
import { type AnyTask, defineTask } from '../../lib/registry/define-task.js';
import { Registry } from '../../lib/registry/registry.js';
import { taskStubs } from '../../lib/registry/task-stubs.js';

const task = (name: string, queue = 'q') => defineTask({ name, queue, params: z.object({}), run: () => name });

test('a stub is registered by name and queue, and its group is loaded once, however many ask at once', async () => {
  let loads = 0;
  const stubs = taskStubs(
    [
      { name: 'app.a', queue: 'q' },
      { name: 'app.b', queue: 'q' },
    ],
    async () => {
      loads++;
      return [task('app.a'), task('app.b')];
    },
  );
  const registry = new Registry([task('own.c')], stubs, (t) => ({ ...t, rateLimit: '5/s' }));
  expect(registry.names()).toEqual(['app.a', 'app.b', 'own.c']);
  expect(registry.has('app.a')).toBe(true);
  expect(registry.queueOf('app.b')).toBe('q');
  expect(registry.find('app.a')).toBeUndefined();
  expect(loads).toBe(0);
  const [a, again, b] = await Promise.all([registry.load('app.a'), registry.load('app.a'), registry.load('app.b')]);
  expect(loads).toBe(1);
  expect(again).toBe(a);
  expect(registry.find('app.a')).toBe(a);
  expect([a?.rateLimit, b?.rateLimit]).toEqual(['5/s', '5/s']);
  // The tasks given whole are the caller's, as given.
  expect(registry.find('own.c')?.rateLimit).toBeUndefined();
  expect(await registry.load('nope')).toBeUndefined();
  expect(registry.has('nope')).toBe(false);
});

test('a load that failed is tried again by the next ask', async () => {
  let attempt = 0;
  const stubs = taskStubs([{ name: 'app.a', queue: 'q' }], async () => {
    if (attempt++ === 0) throw new Error('chunk missing');
    return [task('app.a')];
  });
  const registry = new Registry([], stubs);
  await expect(registry.load('app.a')).rejects.toThrow('chunk missing');
  expect(registry.find('app.a')).toBeUndefined();
  expect((await registry.load('app.a'))?.name).toBe('app.a');
});

test("a stub whose module does not define its task, or defines it on another queue, is refused with the task's name", async () => {
  const load = async (): Promise<AnyTask[]> => [task('app.a', 'other')];
  const [missing] = taskStubs([{ name: 'app.gone', queue: 'q' }], load);
  const [moved] = taskStubs([{ name: 'app.a', queue: 'q' }], load);
  await expect(missing?.load()).rejects.toThrow(/"app\.gone": its module does not define it/);
  await expect(moved?.load()).rejects.toThrow(/"app\.a": declared for other, registered for q/);
});

test('a stub named like a registered task is refused at start', () => {
  const stubs = taskStubs([{ name: 'own.c', queue: 'q' }], async () => []);
  expect(() => new Registry([task('own.c')], stubs)).toThrow(/own\.c/);
});
