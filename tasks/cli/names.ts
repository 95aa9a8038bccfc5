/**
 * The subcommands' names, apart from the commands themselves: the worker's start-up asks only whether argv
 * names one, and loads the commands (and what they import) only when it does.
 */
export const COMMAND_NAMES = ['dead-letter', 'tasks', 'doctor', 'contract'] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

export function isCommand(name: string | undefined): name is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(name ?? '');
}
