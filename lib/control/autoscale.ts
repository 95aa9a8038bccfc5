/**
 * Celery's Autoscaler (celery/worker/autoscale.py) for async slots: once a second, when more tasks are
 * reserved or running than there are slots, the slots grow to that number (at most MAX); when fewer, and no
 * growth for `keepaliveMs` (Celery's 30 s), they shrink to it (at least MIN). `autoscale MAX MIN` (remote
 * control, Flower's buttons) moves the bounds at run time.
 */
import type { Logger } from '../logger.js';

export interface Scalable {
  readonly concurrency: number;
  counters(): { readonly active: number; readonly reserved: number };
  resize(slots: number): void;
}

export const AUTOSCALE_KEEPALIVE_MS = 30_000;

export class Autoscaler {
  private timer: NodeJS.Timeout | undefined;
  private lastGrowth = 0;

  constructor(
    private readonly worker: Scalable,
    private bounds: { max: number; min: number },
    private readonly logger: Logger,
    private readonly keepaliveMs = AUTOSCALE_KEEPALIVE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  get max(): number {
    return this.bounds.max;
  }

  get min(): number {
    return this.bounds.min;
  }

  start(intervalMs = 1000): void {
    this.timer = setInterval(() => this.step(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Celery's `Autoscaler.update`: new bounds (either may be left as it is); returns them. */
  update(max: number | null, min: number | null): { max: number; min: number } {
    const nextMax = max ?? this.bounds.max;
    const nextMin = Math.min(min ?? this.bounds.min, nextMax);
    this.bounds = { max: Math.max(1, nextMax), min: Math.max(0, nextMin) };
    const slots = this.worker.concurrency;
    if (slots > this.bounds.max) this.scale(this.bounds.max);
    else if (slots < this.bounds.min) this.scale(this.bounds.min);
    return { ...this.bounds };
  }

  /** One look at the backlog (Celery's `_maybe_scale`). */
  step(): void {
    const { active, reserved } = this.worker.counters();
    const wanted = active + reserved;
    const slots = this.worker.concurrency;
    if (wanted > slots && slots < this.bounds.max) {
      this.lastGrowth = this.now();
      this.scale(Math.min(wanted, this.bounds.max));
    } else if (wanted < slots && slots > this.bounds.min && this.now() - this.lastGrowth > this.keepaliveMs) {
      this.scale(Math.max(wanted, this.bounds.min));
    }
  }

  private scale(to: number): void {
    const from = this.worker.concurrency;
    if (to === from) return;
    this.worker.resize(to);
    this.logger.info(`autoscale: ${to > from ? 'grew' : 'shrank'} from ${from} to ${to} slots`, {
      slots: to,
      max: this.bounds.max,
      min: this.bounds.min,
    });
  }
}
