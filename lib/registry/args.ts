/**
 * Binds Celery's `(args, kwargs)` to a task's named parameters the way a Python call would, then validates
 * them with the task's schema. Every problem is named by parameter, and all are reported at once.
 */
import { TaskArgumentsError } from '../errors.js';
import type { AnyTask } from './define-task.js';

export function bindArguments(
  task: AnyTask<never> | AnyTask,
  args: readonly unknown[],
  kwargs: Record<string, unknown>,
): unknown {
  const problems: string[] = [];
  let input: Record<string, unknown>;
  if (task.varArgs) {
    input = { ...kwargs, args: [...args] };
  } else {
    input = {};
    if (args.length > task.argNames.length) {
      problems.push(`takes ${task.argNames.length} positional argument(s) but ${args.length} were given`);
    }
    args.forEach((value, i) => {
      const name = task.argNames[i];
      if (name !== undefined) input[name] = value;
    });
    for (const [k, v] of Object.entries(kwargs)) {
      if (k in input) problems.push(`got multiple values for argument '${k}'`);
      else input[k] = v;
    }
  }
  if (problems.length === 0) {
    const parsed = task.params.safeParse(input);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) {
      const where = issue.path.length > 0 ? `'${issue.path.map(String).join('.')}'` : 'arguments';
      problems.push(`${where}: ${issue.message}`);
    }
  }
  throw new TaskArgumentsError(task.name, problems);
}
