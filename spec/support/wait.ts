/** The one way a test waits for something to become true: poll a probe until it answers, or fail naming what. */

export interface WaitOptions {
  /** Pause between probes (ms): short for in-process state, longer for a probe that asks a server. */
  readonly stepMs?: number;
  /** What is awaited, for the error when it does not come; a function is read only then (e.g. a log's tail). */
  readonly what?: string | (() => string);
}

/**
 * Calls `probe` until it returns something other than `undefined`, `null` or `false`, and returns that value; throws
 * after `timeoutMs`. `options` is the pause between probes (ms) or a `WaitOptions`. A probe that throws ends the wait with its error (e.g. "the process exited before it answered").
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 15_000,
  options: number | WaitOptions = {},
): Promise<T> {
  const { stepMs = 50, what = 'condition' } = typeof options === 'number' ? { stepMs: options } : options;
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() > end) throw new Error(`${typeof what === 'string' ? what : what()}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
