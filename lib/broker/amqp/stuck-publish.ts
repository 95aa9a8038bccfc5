/**
 * When is a publish channel stuck? A RabbitMQ node can nack every publish of one channel, or leave them all
 * unconfirmed, while the connection lives and other channels publish fine (seen once after a cluster node was
 * stopped: 60 s of nacked sends to a quorum queue). A channel is stuck when, for longer than `channelMs`, nothing
 * it sent was confirmed: every publish since its last ack was nacked or is still waiting. The broker then opens a
 * new channel; when the trouble outlasts `connectionMs` across renewed channels, a new connection.
 *
 * Pure bookkeeping with an injected clock, so that the bounds are testable without a broker.
 */
export interface StuckBounds {
  /** Nothing confirmed for this long, with publishes nacked or waiting: a new channel. */
  channelMs: number;
  /** Still nothing confirmed this long after the trouble began, on renewed channels: a new connection. */
  connectionMs: number;
}

export const DEFAULT_STUCK_BOUNDS: StuckBounds = { channelMs: 10_000, connectionMs: 30_000 };

export type Renewal = 'channel' | 'connection';

export class StuckPublishWatch {
  /** The last ack on the current channel (or when the channel was opened). */
  private lastAckAt: number;
  /** The first nack on the current channel since its last ack. */
  private firstNackAt: number | undefined;
  /** When the trouble began, kept across channel renewals; cleared by an ack. */
  private troubleSince: number | undefined;
  private channelRenewals = 0;

  constructor(
    readonly bounds: StuckBounds = DEFAULT_STUCK_BOUNDS,
    private readonly now: () => number = Date.now,
  ) {
    this.lastAckAt = now();
  }

  acked(): void {
    this.lastAckAt = this.now();
    this.firstNackAt = undefined;
    this.troubleSince = undefined;
    this.channelRenewals = 0;
  }

  nacked(): void {
    this.firstNackAt ??= this.now();
    this.troubleSince ??= this.firstNackAt;
  }

  /** Since when the current channel has confirmed nothing it sent; undefined when it is not in trouble. */
  private channelTrouble(oldestUnconfirmedAt: number | undefined): number | undefined {
    // A publish still waiting counts only when no ack came after it was sent (acks flow: not stuck).
    const waiting =
      oldestUnconfirmedAt !== undefined && oldestUnconfirmedAt >= this.lastAckAt ? oldestUnconfirmedAt : undefined;
    if (waiting === undefined) return this.firstNackAt;
    return this.firstNackAt === undefined ? waiting : Math.min(waiting, this.firstNackAt);
  }

  /** What to renew now, given when the oldest publish still waiting for its confirm was sent. */
  check(oldestUnconfirmedAt: number | undefined): Renewal | undefined {
    const since = this.channelTrouble(oldestUnconfirmedAt);
    if (since === undefined) return undefined;
    this.troubleSince ??= since;
    const now = this.now();
    if (this.channelRenewals > 0 && now - this.troubleSince > this.bounds.connectionMs) return 'connection';
    if (now - since > this.bounds.channelMs) return 'channel';
    return undefined;
  }

  /** Times from now, forgetting the trouble so far (the connection was blocked by the broker meanwhile). */
  restart(): void {
    this.lastAckAt = this.now();
    this.firstNackAt = undefined;
    this.troubleSince = undefined;
    this.channelRenewals = 0;
  }

  /** A new channel (the trouble goes on being timed) or a new connection (a fresh start). */
  renewed(what: Renewal): void {
    this.lastAckAt = this.now();
    this.firstNackAt = undefined;
    if (what === 'channel') {
      this.channelRenewals++;
    } else {
      this.troubleSince = undefined;
      this.channelRenewals = 0;
    }
  }
}
