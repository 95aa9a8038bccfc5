import * as z from 'zod';
import { bindArguments } from '../../lib/registry/args.js';
import { defineTask } from '../../lib/registry/define-task.js';

const add = defineTask({
  name: 't.add',
  queue: 'q',
  params: z.object({ x: z.number(), y: z.number().default(10) }).strict(),
  run: ({ x, y }) => x + y,
});

function problemOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect((err as { code: string }).code).toBe('TASK_ARGUMENTS_INVALID');
    expect((err as { pyType: string }).pyType).toBe('TypeError');
    return (err as Error).message;
  }
  throw new Error('did not throw');
}

describe('binding Celery args and kwargs to named parameters', () => {
  test('positional arguments map by order, kwargs by name, defaults fill the rest', () => {
    expect(bindArguments(add, [1, 2], {})).toEqual({ x: 1, y: 2 });
    expect(bindArguments(add, [], { x: 1 })).toEqual({ x: 1, y: 10 });
    expect(bindArguments(add, [1], { y: 5 })).toEqual({ x: 1, y: 5 });
  });

  test('too many positional arguments is reported like Python', () => {
    expect(problemOf(() => bindArguments(add, [1, 2, 3], {}))).toContain(
      'takes 2 positional argument(s) but 3 were given',
    );
  });

  test('a value given twice is reported', () => {
    expect(problemOf(() => bindArguments(add, [1], { x: 2 }))).toContain("got multiple values for argument 'x'");
  });

  test('a missing or mistyped argument is named', () => {
    expect(problemOf(() => bindArguments(add, [], {}))).toContain("'x'");
    expect(problemOf(() => bindArguments(add, ['a'], {}))).toContain("'x'");
  });

  test('an unknown keyword is refused by a strict schema', () => {
    expect(problemOf(() => bindArguments(add, [1], { z: 1 }))).toMatch(/z/);
  });

  test('every problem is reported at once', () => {
    const message = problemOf(() => bindArguments(add, ['a'], { y: 'b' }));
    expect(message).toContain("'x'");
    expect(message).toContain("'y'");
  });
});
