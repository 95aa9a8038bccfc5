/**
 * What an AMQP consumer may hold in memory at once. RabbitMQ sends a consumer up to its prefetch without
 * asking, and amqplib assembles each body whole: a prefetch of 16 messages of 20 MB is 320 MB before the
 * worker has looked at one. So a consumer's window (the prefetch it consumes with) opens at 1 and doubles
 * after each window's worth of deliveries, never beyond as many of the largest of them as fit a byte budget
 * nor beyond the configured prefetch; and while the consume channel's unsettled deliveries weigh more than
 * the budget its consumers are paused, to start again at as many of the largest they saw as fit
 * (amqp-consumers.ts does the consuming).
 */

/** Bytes of unsettled deliveries the consume channel holds before its consumers pause. */
export const DEFAULT_HELD_BYTES = 16 * 1024 * 1024;

/** AMQP's prefetch count is 16 bits. */
const MAX_PREFETCH = 65_535;

/** The bytes of one consume channel's unsettled deliveries. */
export class HeldBytes {
  private bytes = 0;
  constructor(readonly budget: number) {}
  get held(): number {
    return this.bytes;
  }
  add(n: number): void {
    this.bytes += n;
  }
  remove(n: number): void {
    this.bytes = Math.max(0, this.bytes - n);
  }
  get over(): boolean {
    return this.bytes > this.budget;
  }
}

/**
 * One consumer's window: its prefetch now (`full` = the configured one, 0 unlimited). It opens at 1, and
 * after each window's worth of deliveries doubles, up to as many of the largest of them as fit the budget.
 */
export class HeldWindow {
  /** The prefetch to consume with now. */
  size = 1;
  private largest = 0;
  private count = 0;
  constructor(
    private readonly full: number,
    private readonly budget: number,
  ) {}

  /** How many messages of `bytes` fit the budget, at least 1, at most the configured prefetch. */
  private fits(bytes: number): number {
    const n = Math.max(1, Math.floor(this.budget / Math.max(1, bytes)));
    if (this.full === 0) return n >= MAX_PREFETCH ? 0 : n;
    return Math.min(this.full, n);
  }

  private static wider(a: number, b: number): boolean {
    return (a === 0 ? Infinity : a) > (b === 0 ? Infinity : b);
  }

  /**
   * A delivery arrived on a consumer whose own window is `taken` (the window less what earlier consumers
   * left unsettled); true when the window should widen now (to `size`).
   */
  arrived(bytes: number, taken: number): boolean {
    this.largest = Math.max(this.largest, bytes);
    this.count++;
    if (this.size === 0 || this.count < Math.max(1, taken)) return false;
    const doubled = this.size * 2 < MAX_PREFETCH ? this.size * 2 : this.full === 0 ? 0 : MAX_PREFETCH;
    const fit = this.fits(this.largest);
    const next = HeldWindow.wider(fit, doubled) ? doubled : fit;
    this.largest = 0;
    this.count = 0;
    if (!HeldWindow.wider(next, this.size)) return false;
    this.size = next;
    return true;
  }

  /** After a pause: as many of the largest it saw since its last change as fit, at most the window it had. */
  resumed(): void {
    const fit = this.fits(this.largest);
    this.size = HeldWindow.wider(fit, this.size) ? this.size : fit;
    this.largest = 0;
    this.count = 0;
  }
}
