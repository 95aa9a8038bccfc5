/**
 * Notices when the event loop was blocked (a synchronous task, a huge JSON.parse): a timer that should fire every
 * `tickMs` and fires late by the time the loop was held. Only after the block can anything be said, so the report
 * is after the fact: a log line naming the runs that ran meanwhile, a metric, and /healthz "degraded" for a while.
 * A block past the liveness limit (5 s) is /healthz's 503, a restart; this is for the shorter ones, which only
 * an operator can judge.
 */
export interface Stall {
  readonly blockedMs: number;
  /** When the loop got free again (epoch ms). */
  readonly at: number;
}

export interface StallWatchOptions {
  /** A lateness at least this long is a stall. */
  reportMs: number;
  tickMs?: number;
  onStall(stall: Stall): void;
  /** After every tick, stall or not. */
  onTick?(): void;
}

export class StallWatch {
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  private count = 0;
  private latest: Stall | null = null;

  constructor(private readonly opts: StallWatchOptions) {}

  get stalls(): number {
    return this.count;
  }

  get lastStall(): Stall | null {
    return this.latest;
  }

  start(): void {
    const tick = this.opts.tickMs ?? 100;
    this.last = performance.now();
    this.timer = setInterval(() => this.tick(performance.now(), Date.now()), tick);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One timer firing at monotonic time `now` (ms), wall clock `wall`: a stall if it is late by reportMs or more. */
  tick(now: number, wall: number): Stall | null {
    const late = now - this.last - (this.opts.tickMs ?? 100);
    this.last = now;
    let stall: Stall | null = null;
    if (late >= this.opts.reportMs) {
      stall = { blockedMs: Math.round(late), at: wall };
      this.count++;
      this.latest = stall;
      this.opts.onStall(stall);
    }
    this.opts.onTick?.();
    return stall;
  }
}

export interface Health {
  code: 200 | 503;
  body: string;
}

/**
 * /healthz: 503 only when the loop was held past the liveness limit since the last probe (restart me); 200
 * "degraded" while a shorter stall is recent (look at me, do not kill me); otherwise 200 "ok".
 */
export function healthOf(input: {
  maxDelayMs: number;
  livenessMs: number;
  lastStall: Stall | null;
  now: number;
  degradedForMs: number;
  lateDelayLevels?: readonly number[];
  /** The contained errors by kind since start (`ContainedErrors.summary`): said, never a failure of the probe. */
  contained?: string;
}): Health {
  const h = probe(input);
  return input.contained ? { code: h.code, body: `${h.body}contained errors since start: ${input.contained}\n` } : h;
}

function probe(input: Parameters<typeof healthOf>[0]): Health {
  if (input.maxDelayMs > input.livenessMs) {
    return { code: 503, body: `event loop stalled for ${Math.round(input.maxDelayMs)} ms\n` };
  }
  // A stalled delay level is the broker's, not this process's: a restart would not heal it.
  const late = input.lateDelayLevels ?? [];
  if (late.length > 0) {
    return {
      code: 200,
      body: `degraded: delay level${late.length > 1 ? 's' : ''} ${late.join(', ')} late (stalled?)\n`,
    };
  }
  const s = input.lastStall;
  if (s && input.now - s.at < input.degradedForMs) {
    return {
      code: 200,
      body: `degraded: event loop blocked for ${s.blockedMs} ms, ${Math.round((input.now - s.at) / 1000)} s ago\n`,
    };
  }
  return { code: 200, body: 'ok\n' };
}
