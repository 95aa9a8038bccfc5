/**
 * A subcommand's own flags (`--task NAME`, `--contract`), taken out of the command line before the rest
 * goes to the settings loader, which refuses flags it does not know.
 */
export interface CommandFlags {
  strings: readonly string[];
  booleans: readonly string[];
}

export class UsageError extends Error {}

/** A subcommand that takes words: them, its own flags, the settings and where it prints; it answers the exit code. */
export type Command<Config> = (
  positionals: readonly string[],
  own: Record<string, string | true>,
  config: Config,
  out: (s: string) => void,
) => Promise<number>;

export function takeCommandFlags(
  argv: readonly string[],
  flags: CommandFlags,
): { own: Record<string, string | true>; rest: string[] } {
  const own: Record<string, string | true> = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const m = /^--([^=]+)(?:=(.*))?$/.exec(arg);
    const name = m?.[1];
    if (name !== undefined && flags.booleans.includes(name)) {
      own[name] = true;
    } else if (name !== undefined && flags.strings.includes(name)) {
      const value = m?.[2] ?? argv[++i];
      if (value === undefined || (m?.[2] === undefined && value.startsWith('--'))) {
        throw new UsageError(`--${name} needs a value`);
      }
      own[name] = value;
    } else {
      rest.push(arg);
    }
  }
  return { own, rest };
}
