/** A Beat replica of the lock tests (spec/support/beat-main.ts) in a process of its own, and what it says it sends. */
import { type ChildProcess, spawn } from 'node:child_process';
import { onLines } from './child.js';

/** One due task the replica announced sending: its task id, and when the line arrived. */
export interface BeatSend {
  id: string;
  at: number;
  /** The entry's name, and which run of it this is (its total run count once sent). */
  entry?: string;
  run?: number;
}

/**
 * Starts a replica with `env` (BEAT_QUEUE, BEAT_STORE_KEY, BEAT_LOCK, … as beat-main.ts reads them) on top of
 * this process's; `onSend` hears each `beat: sending due task` line of its JSON log, as it arrives.
 */
export function spawnBeat(
  env: Record<string, string>,
  onSend: (send: BeatSend, beat: ChildProcess) => void,
  stderr: 'inherit' | 'ignore' = 'inherit',
): ChildProcess {
  const beat = spawn(process.execPath, ['--import', 'tsx', 'spec/support/beat-main.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', stderr],
  });
  onLines(beat.stdout, (line) => {
    let rec: { message?: string; id?: string; run?: number } = {};
    try {
      rec = JSON.parse(line) as typeof rec;
    } catch {
      return;
    }
    if (rec.message?.startsWith('beat: sending due task') && rec.id) {
      const entry = /^beat: sending due task (\S+)/.exec(rec.message)?.[1];
      onSend(
        {
          id: rec.id,
          at: Date.now(),
          ...(entry ? { entry } : {}),
          ...(rec.run !== undefined ? { run: rec.run } : {}),
        },
        beat,
      );
    }
  });
  return beat;
}
