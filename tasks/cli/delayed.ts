/**
 * `smarter-worker delayed purge|release [--queue Q]`: the parked countdowns of Q (of every queue without
 * --queue) removed, or moved back into their queue now. On a terminal a progress line on stderr (count,
 * rate, time left); the summary on stdout. Ctrl-C stops taking more and settles what is in flight, so every
 * countdown is then acted on once or still parked; a second Ctrl-C is only told to wait.
 */
import type { Broker, DelayedProgress } from '../../lib/broker/broker.js';

export interface DelayedRun {
  action: 'purge' | 'release';
  queue: string | undefined;
  out: (line: string) => void;
  /** The progress line's terminal; none when stderr is not one. */
  tty?: NodeJS.WriteStream | undefined;
  now?: () => number;
}

export function formatProgress(p: DelayedProgress, elapsedMs: number, verb: string): string {
  const rate = elapsedMs > 0 ? (p.seen * 1000) / elapsedMs : 0;
  const left = rate > 0 && p.total > p.seen ? ` · about ${Math.ceil((p.total - p.seen) / rate)} s left` : '';
  return `${verb} ${p.acted.toLocaleString('en')} · looked at ${p.seen.toLocaleString('en')} of ~${p.total.toLocaleString('en')} · ${Math.round(rate).toLocaleString('en')}/s${left}`;
}

export async function runDelayedAction(broker: Broker, run: DelayedRun): Promise<number> {
  const act = run.action === 'purge' ? broker.purgeDelayed?.bind(broker) : broker.releaseDelayed?.bind(broker);
  if (!act) {
    process.stderr.write(`smarter-worker: this broker (${broker.kind}) has no delay store to ${run.action}\n`);
    return 2;
  }
  const now = run.now ?? Date.now;
  const started = now();
  const verb = run.action === 'purge' ? 'purged' : 'released';
  const stop = new AbortController();
  let shownAt = 0;
  const onProgress = (p: DelayedProgress) => {
    const t = now();
    if (!run.tty || t - shownAt < 250) return;
    shownAt = t;
    run.tty.write(`\r\x1b[2K${formatProgress(p, t - started, verb)}`);
  };
  const onSigint = () => {
    if (!stop.signal.aborted) {
      process.stderr.write(`\nsmarter-worker: stopping: settling what is in flight; the rest stays parked\n`);
      stop.abort();
    } else {
      process.stderr.write('smarter-worker: still settling what is in flight, a moment\n');
    }
  };
  process.on('SIGINT', onSigint);
  try {
    const n = await act(run.queue, { onProgress, signal: stop.signal });
    if (run.tty) run.tty.write('\r\x1b[2K');
    const seconds = (now() - started) / 1000;
    const where = run.queue === undefined ? '' : ` for ${run.queue}`;
    const rate = seconds > 0 ? `, ${Math.round(n / seconds).toLocaleString('en')}/s` : '';
    const stopped = stop.signal.aborted ? '; stopped by Ctrl-C, the rest is still parked' : '';
    run.out(
      `${verb} ${n} delayed message(s)${where}${run.action === 'release' ? ' into their queues' : ''} in ${seconds.toFixed(1)} s${rate}${stopped}`,
    );
    return stop.signal.aborted ? 130 : 0;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
