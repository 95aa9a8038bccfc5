/** The subcommands of `smarter-worker` that are not the worker: each takes its own flags, then the settings. */
import { loadCommandLine } from '../../lib/config/settings.js';
import { BrokerError } from '../../lib/errors.js';
import { SETTINGS } from '../settings.js';
import { CONTRACT_FLAGS, contractCommand } from './contract/index.js';
import { DEAD_LETTER_FLAGS, deadLetterCommand } from './dead-letter.js';
import { DOCTOR_FLAGS, doctorCommand } from './doctor.js';
import { type CommandFlags, UsageError, takeCommandFlags } from './options.js';
import { TASKS_FLAGS, tasksCommand } from './tasks.js';

import { type CommandName, isCommand } from './names.js';

const COMMANDS: Record<CommandName, CommandFlags> = {
  'dead-letter': DEAD_LETTER_FLAGS,
  tasks: TASKS_FLAGS,
  doctor: DOCTOR_FLAGS,
  contract: CONTRACT_FLAGS,
};

export { isCommand };

export async function runCommand(argv: readonly string[]): Promise<number> {
  const [name = '', ...args] = argv;
  const out = (s: string) => void process.stdout.write(`${s}\n`);
  try {
    const { own, rest } = takeCommandFlags(args, isCommand(name) ? COMMANDS[name] : { strings: [], booleans: [] });
    const loaded = loadCommandLine('smarter-worker', SETTINGS, process.env, rest);
    if (!loaded) return 2;
    if (name === 'tasks') {
      if (loaded.positionals.length > 0) throw new UsageError('usage: smarter-worker tasks [--contract]');
      return tasksCommand(own, loaded.values, out);
    }
    if (name === 'doctor') return await doctorCommand(loaded.positionals, own, loaded.values, out);
    if (name === 'contract') {
      if (loaded.positionals.length > 0) {
        throw new UsageError('usage: smarter-worker contract --smarter <path> [--json]');
      }
      return await contractCommand(own, 'worker', out);
    }
    return await deadLetterCommand(loaded.positionals, own, loaded.values, out);
  } catch (err) {
    // A queue that does not exist or a broker that cannot be reached is said in one line, not a stack.
    if (err instanceof BrokerError) {
      process.stderr.write(`smarter-worker: ${err.message}\n`);
      return 1;
    }
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`smarter-worker: ${err.message}\n`);
    return 2;
  }
}
