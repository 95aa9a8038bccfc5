/**
 * The AMQP broker's connections and their supervision (Celery's `celery/worker/consumer/connection.py` and
 * kombu's `ensure_connection` do this for Python): two connections, as Celery's consumer and producer have. One
 * consumes and acks (a consume channel, declarations, inspections), the other has the confirm channel for
 * everything the worker publishes. RabbitMQ blocks a connection that publishes during a memory or disk alarm,
 * reading nothing more from it; on its own connection that block stops publishing only, and consuming and
 * acking go on. The two are one unit for recovery: when either is lost, both are opened again.
 *
 * Recovery is ours rather than amqplib's `recovery` option because channel-only closures (a 406 from an
 * inequivalent declare, an unknown delivery tag, RabbitMQ's consumer_timeout) leave the connection up; we
 * treat any unexpected channel close as a lost connection, reconnect with backoff (the next URL of a failover
 * list first), and let the broker restore its declarations and consumers (`restore`). Deliveries from before a
 * reconnect can no longer be settled: the broker redelivers them. A publish channel that confirms nothing is
 * renewed (stuck-publish.ts), unless the broker said it blocks the connection.
 */
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { EventEmitter } from 'node:events';
import { redactUrl } from '../../config/settings.js';
import type { TlsSettings } from '../../config/tls.js';
import { BrokerError, coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { PublishProperties } from '../../protocol/encode.js';
import type { BrokerBlock, BrokerEvents } from '../broker.js';
import { AckBatcher } from './ack-batcher.js';
import { FailoverList, connectTo } from './amqp-connect.js';
import type { AckMeta, DeliveryChannels } from './amqp-delivery.js';
import { ConfirmPublisher } from './amqp-publish.js';
import type { Copies } from './copies.js';
import { Doubts } from './doubts.js';
import { DEFAULT_STUCK_BOUNDS, type Renewal, type StuckBounds, StuckPublishWatch } from './stuck-publish.js';

export interface AmqpConnectionOptions {
  /** One URL, or Celery's failover list `amqp://a;amqp://b` (tried round-robin, the next one on loss). */
  url: string;
  logger: Logger;
  heartbeatSeconds?: number | undefined;
  /** Name shown in the RabbitMQ management UI. */
  connectionName?: string | undefined;
  reconnectInitialMs?: number | undefined;
  reconnectMaxMs?: number | undefined;
  /** How long a publish waits for a connection before it fails. */
  publishTimeoutMs?: number | undefined;
  /** Celery's `broker_use_ssl`. */
  tls?: TlsSettings | undefined;
  /** One connection attempt's budget before the next URL is tried. */
  connectTimeoutMs?: number | undefined;
  /** When a publish channel that confirms nothing is renewed (stuck-publish.ts). */
  stuckPublish?: StuckBounds | undefined;
}

/** The channels of an open connection pair. */
export interface Opened {
  model: ChannelModel;
  consumeCh: Channel;
  publishCh: ConfirmChannel;
}

export class AmqpConnection implements DeliveryChannels {
  /** The connection that consumes and acks. */
  private model: ChannelModel | undefined;
  /** The connection that publishes. */
  private publishModel: ChannelModel | undefined;
  private consumeCh: Channel | undefined;
  private acks: AckBatcher<AckMeta> | undefined;
  private publishCh: ConfirmChannel | undefined;
  private readonly stuck: StuckPublishWatch;
  private readonly publisher: ConfirmPublisher;
  private stuckTimer: NodeJS.Timeout | undefined;
  private renewing = false;
  /** Publish channels closed on purpose (renewed): their closing is not a lost connection. */
  private readonly retired = new WeakSet<Channel>();
  /** Stuck publish channels renewed since start: by a new channel, or by a new connection. */
  readonly publishRenewals: Record<Renewal, number> = { channel: 0, connection: 0 };
  /** Publishes left unconfirmed by a lost or renewed connection: what became of them. */
  private readonly doubts: Doubts;
  private readonly liveChannels = new WeakSet<Channel>();
  readonly events = new EventEmitter();
  private closingNow = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  /** Connection attempts failed since the last success (`connectFailed`). */
  private failedInARow = 0;
  private readyWaiters: Array<() => void> = [];
  connected = false;
  /** Settles that could not be sent because their channel was gone (the broker redelivers those messages). */
  staleSettles = 0;
  /** When the connection was lost, for the reconnect log line. */
  private lostAt: number | undefined;
  private everConnected = false;
  private readonly failover: FailoverList;
  private connectedTo: string | undefined;
  private block: BrokerBlock | undefined;

  /** `restore` declares again and consumes again on a fresh connection, before anyone hears it is up. */
  constructor(
    private readonly opts: AmqpConnectionOptions,
    private readonly restore: (model: ChannelModel) => Promise<void>,
    copies: Copies,
  ) {
    this.failover = new FailoverList(opts.url);
    this.stuck = new StuckPublishWatch(opts.stuckPublish ?? DEFAULT_STUCK_BOUNDS);
    this.publisher = new ConfirmPublisher({
      acked: () => this.stuck.acked(),
      nacked: () => {
        this.stuck.nacked();
        this.checkStuck();
      },
    });
    this.doubts = new Doubts(this.publisher, copies, opts.logger, (ch) => this.publishCh === ch && !this.closingNow);
  }

  /** Publishes sent again after their connection was lost or renewed unconfirmed (each may reach a queue twice). */
  get publishesResentOnRenewal(): number {
    return this.doubts.sentAgain;
  }

  /** Set while RabbitMQ blocks the connection that publishes (a memory or disk alarm). */
  get blocked(): BrokerBlock | undefined {
    return this.block;
  }

  /** The broker this connection is on now (password hidden); undefined while disconnected. */
  get connectedUrl(): string | undefined {
    return this.connected ? this.connectedTo : undefined;
  }

  get closing(): boolean {
    return this.closingNow;
  }

  /** The consume channel and its acks; undefined while there is none. */
  get consuming(): { ch: Channel; acks: AckBatcher<AckMeta> } | undefined {
    return this.consumeCh && this.acks ? { ch: this.consumeCh, acks: this.acks } : undefined;
  }

  /** The consume connection as it is now. */
  get current(): ChannelModel | undefined {
    return this.model;
  }

  on<E extends keyof BrokerEvents>(event: E, listener: BrokerEvents[E]): void {
    this.events.on(event, listener);
  }

  isLive(channel: Channel): boolean {
    return this.liveChannels.has(channel);
  }

  /** A scratch channel whose deliveries may be settled while it is open (`take`). */
  markLive(channel: Channel, live: boolean): void {
    if (live) this.liveChannels.add(channel);
    else this.liveChannels.delete(channel);
  }

  /** A settle whose channel is gone: never silent. */
  staleSettle(queue: string, what: string, correlationId: string | undefined): void {
    this.staleSettles++;
    this.opts.logger.warn(
      `could not ${what} a message of ${queue}: the channel it came on is gone; the broker redelivers it`,
      { queue, correlation_id: correlationId },
    );
  }

  async connect(): Promise<void> {
    this.closingNow = false;
    for (;;) {
      try {
        await this.open();
        return;
      } catch (err) {
        if (this.closingNow) throw new BrokerError('closed while connecting', { cause: err });
        this.lostAt ??= Date.now();
        const delay = this.afterFailure();
        this.opts.logger.warn(`broker connection failed, ${this.retryWhat(delay)}`, {
          error: coerceError(err).message,
        });
        this.events.emit('connectFailed', ++this.failedInARow, coerceError(err));
        // A listener that gave up (`broker_connection_max_retries`) closed the broker: no more attempts.
        if (this.closingNow) throw new BrokerError('closed while connecting', { cause: err });
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /**
   * Moves to the next URL of the failover list; the wait before trying it is 0 until every URL has failed
   * once in a row (kombu backs off only after a full cycle), then the usual backoff.
   */
  private afterFailure(): number {
    this.failover.failed();
    return this.failover.roundDone ? this.nextDelay() : 0;
  }

  private retryWhat(delay: number): string {
    const url = this.failover.urls.length > 1 ? ` with ${redactUrl(this.failover.current)}` : '';
    return `retrying${url} in ${delay} ms`;
  }

  private nextDelay(): number {
    const initial = this.opts.reconnectInitialMs ?? 200;
    const max = this.opts.reconnectMaxMs ?? 15_000;
    const base = Math.min(max, initial * 2 ** this.attempt++);
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  private endpoint() {
    return {
      heartbeatSeconds: this.opts.heartbeatSeconds ?? 60,
      connectionName: this.opts.connectionName ?? 'smarter-worker',
      tls: this.opts.tls,
      connectTimeoutMs: this.opts.connectTimeoutMs ?? 4000,
    };
  }

  private async open(): Promise<void> {
    const url = this.failover.current;
    const endpoint = this.endpoint();
    const model = await connectTo(url, endpoint);
    model.on('error', (err: Error) => this.opts.logger.warn('broker connection error', { error: err.message }));
    model.on('close', (err?: Error) => this.lost(model, err));
    let publishModel: ChannelModel;
    try {
      publishModel = await connectTo(url, { ...endpoint, connectionName: `${endpoint.connectionName} (publish)` });
    } catch (err) {
      await model.close().catch(() => undefined);
      throw err;
    }
    publishModel.on('error', (err: Error) =>
      this.opts.logger.warn('broker publish connection error', { error: err.message }),
    );
    // Its loss is the pair's: the consume connection is closed too, and its close handler reconnects both.
    publishModel.on('close', () => {
      if (this.publishModel === publishModel && !this.closingNow) void model.close().catch(() => undefined);
    });
    publishModel.on('blocked', (reason: unknown) => this.blockedBy(publishModel, reason));
    publishModel.on('unblocked', () => this.unblocked(publishModel));
    try {
      await this.setUpOn(model, publishModel, url);
    } catch (err) {
      // A node that accepts connections but cannot serve yet (a quorum queue without a leader): try the next.
      if (this.model === model) {
        for (const ch of [this.consumeCh, this.publishCh]) if (ch) this.liveChannels.delete(ch);
        this.model = undefined;
        this.publishModel = undefined;
        this.consumeCh = undefined;
        this.publishCh = undefined;
      }
      await publishModel.close().catch(() => undefined);
      await model.close().catch(() => undefined);
      throw err;
    }
  }

  /** Channels, topology, queues and consumers on a fresh connection, then everyone waiting hears of it. */
  private async setUpOn(model: ChannelModel, publishModel: ChannelModel, url: string): Promise<void> {
    const consumeCh = await model.createChannel();
    const publishCh = await publishModel.createConfirmChannel();
    // The fence: RabbitMQ deletes an exclusive queue when it closes its connection, and has then routed
    // everything that connection sent. Until it is gone, a publish in doubt may still reach a queue.
    const fence = (await publishCh.assertQueue('', { exclusive: true, durable: false })).queue;
    this.publisher.watch(publishCh, fence);
    for (const ch of [consumeCh, publishCh]) this.guard(model, ch);
    const acks = this.ackBatcher(consumeCh);
    consumeCh.on('close', () => this.dropAcks(acks));
    this.model = model;
    this.publishModel = publishModel;
    this.consumeCh = consumeCh;
    this.acks = acks;
    this.publishCh = publishCh;
    await this.restore(model);
    // Closed while this connection was being made (a shutdown during a reconnect): it must not outlive the close,
    // which found nothing to close yet; open() closes both connections on this error.
    if (this.closingNow) throw new BrokerError('closed while connecting');
    this.connected = true;
    this.attempt = 0;
    this.failedInARow = 0;
    this.failover.succeeded();
    this.connectedTo = redactUrl(url);
    this.opts.logger.info(`broker connected to ${this.connectedTo}`, { broker_url: this.connectedTo });
    if (this.lostAt !== undefined) {
      const awayMs = Date.now() - this.lostAt;
      this.lostAt = undefined;
      const what = this.everConnected ? 'broker connection restored after' : 'broker connected after retrying for';
      this.opts.logger.info(`${what} ${(awayMs / 1000).toFixed(1)} s${this.everConnected ? ' away' : ''}`, {
        away_ms: awayMs,
      });
    }
    this.everConnected = true;
    // Publishes whose confirm was lost with an earlier connection: their doubt is settled on this one.
    void this.doubts.settle(model, publishCh);
    // Nacks heard on a previous connection say nothing of this one.
    this.stuck.renewed('connection');
    this.watchStuck();
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const w of waiters) w();
    this.events.emit('connected');
  }

  /** `model` is the consume connection, whose close starts the pair's recovery. */
  private guard(model: ChannelModel, ch: Channel): void {
    this.liveChannels.add(ch);
    ch.on('error', (err: Error) => this.opts.logger.warn('broker channel error', { error: err.message }));
    ch.on('close', () => {
      this.liveChannels.delete(ch);
      // A channel-only closure: restart the whole connection so consumers and prefetch are restored.
      if (!this.closingNow && this.model === model && !this.retired.has(ch)) void model.close().catch(() => undefined);
    });
  }

  /**
   * RabbitMQ stops reading what this connection sends until its alarm clears: publishes wait for their confirm
   * however long it takes. Not a stuck channel, so nothing is renewed nor sent again meanwhile (a renewal would
   * resend what the broker may already hold).
   */
  private blockedBy(model: ChannelModel, reason: unknown): void {
    if (this.publishModel !== model || this.block) return;
    this.block = {
      reason: typeof reason === 'string' && reason !== '' ? reason : 'no reason given',
      since: Date.now(),
    };
    this.opts.logger.warn(
      `broker blocked publishing (${this.block.reason}): publishes wait for it, none is renewed or sent again`,
      { reason: this.block.reason, broker_url: this.connectedTo },
    );
  }

  private unblocked(model: ChannelModel): void {
    if (this.publishModel !== model) return;
    this.endBlock('unblocked');
  }

  private endBlock(how: 'unblocked' | 'connection lost'): void {
    const block = this.block;
    if (!block) return;
    this.block = undefined;
    const ms = Date.now() - block.since;
    this.opts.logger.info(`broker ${how} after ${(ms / 1000).toFixed(1)} s blocked (${block.reason})`, {
      blocked_ms: ms,
      reason: block.reason,
    });
    // The wait for confirms is timed again from now: the time blocked says nothing of the channel.
    this.stuck.restart();
  }

  private watchStuck(): void {
    if (this.stuckTimer) clearInterval(this.stuckTimer);
    const b = this.stuck.bounds;
    this.stuckTimer = setInterval(() => this.checkStuck(), Math.max(100, Math.min(b.channelMs, b.connectionMs) / 4));
    this.stuckTimer.unref();
  }

  /** A publish channel that has confirmed nothing for too long is renewed (stuck-publish.ts). */
  private checkStuck(): void {
    const ch = this.publishCh;
    if (!this.connected || !ch || this.renewing || this.closingNow || this.block) return;
    const what = this.stuck.check(this.publisher.oldestUnconfirmed(ch));
    if (!what) return;
    this.renewing = true;
    (what === 'channel' ? this.renewPublishChannel(ch) : this.renewConnection())
      .catch((err: unknown) =>
        this.opts.logger.warn(`could not renew a stuck publish ${what}`, { error: coerceError(err).message }),
      )
      .finally(() => (this.renewing = false));
  }

  private async renewPublishChannel(old: ConfirmChannel): Promise<void> {
    const model = this.model;
    const publishModel = this.publishModel;
    if (!model || !publishModel) return;
    const fresh = await publishModel.createConfirmChannel();
    if (this.model !== model || this.publishCh !== old) {
      // The connection changed meanwhile: its own channel stands.
      await fresh.close().catch(() => undefined);
      return;
    }
    this.publisher.watch(fresh);
    this.guard(model, fresh);
    this.retired.add(old);
    this.liveChannels.delete(old);
    this.publishCh = fresh;
    // What waits on the old channel is not sent again: the broker may hold it already, and on a live
    // connection the old channel still answers (a confirm, a nack, or its close, which fails them).
    const waiting = this.publisher.waitingOn(old);
    this.stuck.renewed('channel');
    this.publishRenewals.channel++;
    this.opts.logger.warn(
      `publish channel stuck: nothing confirmed for more than ${this.stuck.bounds.channelMs} ms; new publishes go to a new channel, ${waiting} unconfirmed publish(es) wait for the old one's answer`,
      { waiting, broker_url: this.connectedTo },
    );
    void this.publisher.settledOn(old).then(() => old.close().catch(() => undefined));
  }

  private async renewConnection(): Promise<void> {
    const model = this.model;
    if (!model) return;
    // Those of every channel of this connection: its renewed channels' answers are gone with it too.
    const moved = this.publisher.detachAll();
    this.stuck.renewed('connection');
    this.publishRenewals.connection++;
    this.opts.logger.warn(
      `publish channels stuck: nothing confirmed for more than ${this.stuck.bounds.connectionMs} ms on renewed channels; opening a new connection, ${moved} unconfirmed publish(es) in doubt`,
      { resent: moved, broker_url: this.connectedTo },
    );
    // As a lost connection: reconnected (to the next URL of a failover list), where the detached publishes go out.
    await model.close();
  }

  /** Acks of the consume channel, one `multiple` ack per event-loop turn (ack-batcher.ts). */
  private ackBatcher(ch: Channel): AckBatcher<AckMeta> {
    const batcher: AckBatcher<AckMeta> = new AckBatcher<AckMeta>(
      (tag, multiple) => ch.ack({ fields: { deliveryTag: tag } } as ConsumeMessage, multiple),
      (flush) =>
        void setImmediate(() => {
          try {
            flush();
          } catch {
            // The channel closed under us: what was not sent is redelivered by the broker.
            this.dropAcks(batcher);
          }
        }),
    );
    return batcher;
  }

  /** A consume channel is gone: acks still waiting in its batcher are stale settles, never silent. */
  private dropAcks(batcher: AckBatcher<AckMeta>): void {
    for (const m of batcher.drop()) this.staleSettle(m.queue, 'ack', m.correlationId);
  }

  private lost(model: ChannelModel, err: Error | undefined): void {
    if (this.model !== model) return;
    if (this.stuckTimer) clearInterval(this.stuckTimer);
    this.stuckTimer = undefined;
    // Lost while being set up: open() fails with it and its caller tries the next URL.
    const established = this.connected;
    // Before anyone hears of the loss, so that what they check next (Delivery.live) already says so.
    if (this.consumeCh) this.liveChannels.delete(this.consumeCh);
    if (this.publishCh) this.liveChannels.delete(this.publishCh);
    if (this.acks) this.dropAcks(this.acks);
    this.acks = undefined;
    this.lostAt ??= Date.now();
    this.endBlock('connection lost');
    this.connected = false;
    this.model = undefined;
    const publishModel = this.publishModel;
    this.publishModel = undefined;
    void publishModel?.close().catch(() => undefined);
    this.consumeCh = undefined;
    this.publishCh = undefined;
    if (this.closingNow || !established) return;
    // The node that dropped us is the likeliest to be down (stopped, or still shutting down while it
    // accepts): with a failover list, reconnect to the next one first.
    const delay = this.afterFailure();
    this.opts.logger.warn(`broker connection lost; reconnecting`, { error: err?.message, from: this.connectedTo });
    this.events.emit('disconnected', err);
    this.scheduleReconnect(delay);
  }

  private scheduleReconnect(delay: number): void {
    if (this.reconnectTimer || this.closingNow) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.open().catch((err: unknown) => {
        if (this.closingNow) return;
        const next = this.afterFailure();
        this.opts.logger.warn(`broker reconnect failed, ${this.retryWhat(next)}`, { error: coerceError(err).message });
        this.events.emit('connectFailed', ++this.failedInARow, coerceError(err));
        this.scheduleReconnect(next);
      });
    }, delay);
  }

  /** The connection pair as it is now, waiting for one (at most `publishTimeoutMs`) while disconnected. */
  async ready(): Promise<Opened> {
    if (this.closingNow) throw new BrokerError('broker connection closed');
    if (!this.connected) {
      const timeoutMs = this.opts.publishTimeoutMs ?? 30_000;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new BrokerError(`no broker connection after ${timeoutMs} ms`)),
          timeoutMs,
        );
        this.readyWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (this.closingNow) throw new BrokerError('broker connection closed');
    }
    const { model, consumeCh, publishCh } = this;
    if (!model || !consumeCh || !publishCh) throw new BrokerError('broker connection lost');
    return { model, consumeCh, publishCh };
  }

  /** Publishes with confirm; `mandatory` ones that no queue takes fail with UnroutableError instead of vanishing. */
  async publish(
    exchange: string,
    routingKey: string,
    body: Buffer,
    p: PublishProperties,
    mandatory = false,
    deadLetter = false,
  ): Promise<void> {
    const { publishCh } = await this.ready();
    await this.publisher.publish(publishCh, exchange, routingKey, body, p, mandatory, deadLetter);
  }

  async close(): Promise<void> {
    this.closingNow = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    if (this.stuckTimer) clearInterval(this.stuckTimer);
    this.stuckTimer = undefined;
    this.publisher.failDetached(new BrokerError('broker connection closed'));
    const model = this.model;
    const publishModel = this.publishModel;
    this.connected = false;
    this.model = undefined;
    this.publishModel = undefined;
    // Publishes waiting for a connection fail now instead of holding the process open until they time out.
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const w of waiters) w();
    // The channels first: amqplib interleaves channels' frames, and a connection close sent at once can
    // overtake acks still queued on the consume channel (those messages would be delivered again).
    try {
      this.acks?.flush();
    } catch {
      // The channel is already gone: the close handler reports what was not sent.
    }
    // A blocked connection answers nothing, not even a channel's close: amqplib closes it at once instead.
    const channels = this.block ? [this.consumeCh] : [this.consumeCh, this.publishCh];
    this.consumeCh = undefined;
    this.publishCh = undefined;
    for (const ch of channels) if (ch) await ch.close().catch(() => undefined);
    if (publishModel) await publishModel.close().catch(() => undefined);
    if (model) await model.close().catch(() => undefined);
  }
}
