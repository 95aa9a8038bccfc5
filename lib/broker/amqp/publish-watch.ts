/**
 * The watch over the AMQP broker's publishing connection: RabbitMQ's block (`connection.blocked`, a memory or disk
 * alarm) and a publish channel that confirms nothing for too long (stuck-publish.ts), renewed by a new channel, then
 * by a new connection pair, unless the broker said it blocks the connection. connection.ts owns the connections;
 * this file decides when one is renewed and says so.
 */
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { BrokerBlock } from '../broker.js';
import type { ConfirmPublisher } from './amqp-publish.js';
import { type Renewal, type StuckBounds, StuckPublishWatch } from './stuck-publish.js';

/** What the watch asks of the connection pair, as it is now. */
export interface PublishPath {
  /** The connection that publishes; undefined while there is none. */
  publishModel(): ChannelModel | undefined;
  /** The publish channel while connected and not closing; undefined otherwise. */
  publishChannel(): ConfirmChannel | undefined;
  /** Puts a fresh publish channel in place of `old`; false when the connection changed meanwhile. */
  replaceChannel(old: ConfirmChannel): Promise<boolean>;
  /** Closes the pair, which is then opened again (as a lost connection is). */
  reconnect(): Promise<void>;
  /** The broker connected to, for the log lines. */
  brokerUrl(): string | undefined;
}

export class PublishWatch {
  /** Stuck publish channels renewed since start: by a new channel, or by a new connection. */
  readonly publishRenewals: Record<Renewal, number> = { channel: 0, connection: 0 };
  private readonly stuck: StuckPublishWatch;
  private timer: NodeJS.Timeout | undefined;
  private renewing = false;
  private block: BrokerBlock | undefined;

  constructor(
    bounds: StuckBounds,
    private readonly publisher: ConfirmPublisher,
    private readonly logger: Logger,
    private readonly path: PublishPath,
  ) {
    this.stuck = new StuckPublishWatch(bounds);
  }

  /** Set while RabbitMQ blocks the connection that publishes (a memory or disk alarm). */
  get blocked(): BrokerBlock | undefined {
    return this.block;
  }

  /** A publish was confirmed. */
  acked(): void {
    this.stuck.acked();
  }

  /** A publish was nacked: the channel may be stuck. */
  nacked(): void {
    this.stuck.nacked();
    this.check();
  }

  /** A fresh connection pair publishes: nacks heard on a previous one say nothing of it. */
  connected(): void {
    this.stuck.renewed('connection');
    if (this.timer) clearInterval(this.timer);
    const b = this.stuck.bounds;
    this.timer = setInterval(() => this.check(), Math.max(100, Math.min(b.channelMs, b.connectionMs) / 4));
    this.timer.unref();
  }

  /** The pair was lost: nothing to watch until the next one, and a block ends with it. */
  lost(): void {
    this.stop();
    this.endBlock('connection lost');
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * RabbitMQ stops reading what this connection sends until its alarm clears: publishes wait for their confirm
   * however long it takes. Not a stuck channel, so nothing is renewed nor sent again meanwhile (a renewal would
   * resend what the broker may already hold).
   */
  blockedBy(model: ChannelModel, reason: unknown): void {
    if (this.path.publishModel() !== model || this.block) return;
    this.block = {
      reason: typeof reason === 'string' && reason !== '' ? reason : 'no reason given',
      since: Date.now(),
    };
    this.logger.warn(
      `broker blocked publishing (${this.block.reason}): publishes wait for it, none is renewed or sent again`,
      { reason: this.block.reason, broker_url: this.path.brokerUrl() },
    );
  }

  unblocked(model: ChannelModel): void {
    if (this.path.publishModel() !== model) return;
    this.endBlock('unblocked');
  }

  private endBlock(how: 'unblocked' | 'connection lost'): void {
    const block = this.block;
    if (!block) return;
    this.block = undefined;
    const ms = Date.now() - block.since;
    this.logger.info(`broker ${how} after ${(ms / 1000).toFixed(1)} s blocked (${block.reason})`, {
      blocked_ms: ms,
      reason: block.reason,
    });
    // The wait for confirms is timed again from now: the time blocked says nothing of the channel.
    this.stuck.restart();
  }

  /** A publish channel that has confirmed nothing for too long is renewed (stuck-publish.ts). */
  private check(): void {
    const ch = this.path.publishChannel();
    if (!ch || this.renewing || this.block) return;
    const what = this.stuck.check(this.publisher.oldestUnconfirmed(ch));
    if (!what) return;
    this.renewing = true;
    (what === 'channel' ? this.renewChannel(ch) : this.renewConnection())
      .catch((err: unknown) =>
        this.logger.warn(`could not renew a stuck publish ${what}`, { error: coerceError(err).message }),
      )
      .finally(() => (this.renewing = false));
  }

  private async renewChannel(old: ConfirmChannel): Promise<void> {
    if (!(await this.path.replaceChannel(old))) return;
    // What waits on the old channel is not sent again: the broker may hold it already, and on a live
    // connection the old channel still answers (a confirm, a nack, or its close, which fails them).
    const waiting = this.publisher.waitingOn(old);
    this.stuck.renewed('channel');
    this.publishRenewals.channel++;
    this.logger.warn(
      `publish channel stuck: nothing confirmed for more than ${this.stuck.bounds.channelMs} ms; new publishes go to a new channel, ${waiting} unconfirmed publish(es) wait for the old one's answer`,
      { waiting, broker_url: this.path.brokerUrl() },
    );
    void this.publisher.settledOn(old).then(() => old.close().catch(() => undefined));
  }

  private async renewConnection(): Promise<void> {
    // Those of every channel of this connection: its renewed channels' answers are gone with it too.
    const moved = this.publisher.detachAll();
    this.stuck.renewed('connection');
    this.publishRenewals.connection++;
    this.logger.warn(
      `publish channels stuck: nothing confirmed for more than ${this.stuck.bounds.connectionMs} ms on renewed channels; opening a new connection, ${moved} unconfirmed publish(es) in doubt`,
      { resent: moved, broker_url: this.path.brokerUrl() },
    );
    // As a lost connection: reconnected (to the next URL of a failover list), where the detached publishes go out.
    await this.path.reconnect();
  }
}
