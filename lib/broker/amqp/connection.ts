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
 * renewed, unless the broker said it blocks the connection (publish-watch.ts).
 */
import type { Channel, ChannelModel, ConfirmChannel } from 'amqplib';
import { EventEmitter } from 'node:events';
import { redactUrl } from '../../config/settings.js';
import type { TlsSettings } from '../../config/tls.js';
import { BrokerError, coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { PublishProperties } from '../../protocol/encode.js';
import type { BrokerBlock, BrokerEvents } from '../broker.js';
import { type AckBatcher, channelAcks } from './ack-batcher.js';
import { Reconnects, connectTo } from './amqp-connect.js';
import type { AckMeta, DeliveryChannels } from './amqp-delivery.js';
import { ConfirmPublisher } from './amqp-publish.js';
import type { Copies } from './copies.js';
import { Doubts } from './doubts.js';
import { PublishWatch } from './publish-watch.js';
import { DEFAULT_STUCK_BOUNDS, type Renewal, type StuckBounds } from './stuck-publish.js';

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
  private readonly publisher: ConfirmPublisher;
  /** The publishing connection's block and stuck channels. */
  private readonly watch: PublishWatch;
  /** Publish channels closed on purpose (renewed): their closing is not a lost connection. */
  private readonly retired = new WeakSet<Channel>();
  /** Publishes left unconfirmed by a lost or renewed connection: what became of them. */
  private readonly doubts: Doubts;
  private readonly liveChannels = new WeakSet<Channel>();
  readonly events = new EventEmitter();
  private closingNow = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** Connection attempts failed since the last success (`connectFailed`). */
  private failedInARow = 0;
  private readyWaiters: Array<() => void> = [];
  connected = false;
  /** Settles that could not be sent because their channel was gone (the broker redelivers those messages). */
  staleSettles = 0;
  /** When the connection was lost, for the reconnect log line. */
  private lostAt: number | undefined;
  private everConnected = false;
  private readonly reconnects: Reconnects;
  private connectedTo: string | undefined;

  /** `restore` declares again and consumes again on a fresh connection, before anyone hears it is up. */
  constructor(
    private readonly opts: AmqpConnectionOptions,
    private readonly restore: (model: ChannelModel) => Promise<void>,
    copies: Copies,
  ) {
    this.reconnects = new Reconnects(opts.url, opts.reconnectInitialMs ?? 200, opts.reconnectMaxMs ?? 15_000);
    this.publisher = new ConfirmPublisher({ acked: () => this.watch.acked(), nacked: () => this.watch.nacked() });
    this.watch = new PublishWatch(opts.stuckPublish ?? DEFAULT_STUCK_BOUNDS, this.publisher, opts.logger, {
      publishModel: () => this.publishModel,
      publishChannel: () => (this.connected && !this.closingNow ? this.publishCh : undefined),
      replaceChannel: (old) => this.replacePublishChannel(old),
      reconnect: async () => {
        await this.model?.close();
      },
      brokerUrl: () => this.connectedTo,
    });
    this.doubts = new Doubts(this.publisher, copies, opts.logger, (ch) => this.publishCh === ch && !this.closingNow);
  }

  /** Publishes sent again after their connection was lost or renewed unconfirmed (each may reach a queue twice). */
  get publishesResentOnRenewal(): number {
    return this.doubts.sentAgain;
  }

  /** Set while RabbitMQ blocks the connection that publishes (a memory or disk alarm). */
  get blocked(): BrokerBlock | undefined {
    return this.watch.blocked;
  }

  /** Stuck publish channels renewed since start: by a new channel, or by a new connection. */
  get publishRenewals(): Readonly<Record<Renewal, number>> {
    return this.watch.publishRenewals;
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
        const delay = this.reconnects.failed();
        this.opts.logger.warn(`broker connection failed, ${this.reconnects.describe(delay)}`, {
          error: coerceError(err).message,
        });
        this.events.emit('connectFailed', ++this.failedInARow, coerceError(err));
        // A listener that gave up (`broker_connection_max_retries`) closed the broker: no more attempts.
        if (this.closingNow) throw new BrokerError('closed while connecting', { cause: err });
        await new Promise((r) => setTimeout(r, delay));
      }
    }
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
    const url = this.reconnects.url;
    const endpoint = this.endpoint();
    // Both connections at once: each is a TCP and AMQP handshake, the first thing a worker waits for at start.
    // Each hears its errors from its first moment (an `error` nobody listens to ends the process).
    const heard = (name: string, what: string) =>
      connectTo(url, { ...endpoint, connectionName: name }).then((m) => {
        m.on('error', (err: Error) => this.opts.logger.warn(`broker ${what} error`, { error: err.message }));
        return m;
      });
    const [consume, publish] = await Promise.allSettled([
      heard(endpoint.connectionName, 'connection'),
      heard(`${endpoint.connectionName} (publish)`, 'publish connection'),
    ]);
    if (consume.status === 'rejected' || publish.status === 'rejected') {
      for (const made of [consume, publish]) {
        if (made.status === 'fulfilled') await made.value.close().catch(() => undefined);
      }
      throw consume.status === 'rejected' ? consume.reason : (publish as PromiseRejectedResult).reason;
    }
    const model = consume.value;
    const publishModel = publish.value;
    model.on('close', (err?: Error) => this.lost(model, err));
    // Its loss is the pair's: the consume connection is closed too, and its close handler reconnects both.
    publishModel.on('close', () => {
      if (this.publishModel === publishModel && !this.closingNow) void model.close().catch(() => undefined);
    });
    publishModel.on('blocked', (reason: unknown) => this.watch.blockedBy(publishModel, reason));
    publishModel.on('unblocked', () => this.watch.unblocked(publishModel));
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
    const [consumeCh, publishCh] = await Promise.all([model.createChannel(), publishModel.createConfirmChannel()]);
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
    this.failedInARow = 0;
    this.reconnects.succeeded();
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
    this.watch.connected();
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

  /** A fresh publish channel instead of `old` (stuck); false when the connection changed meanwhile. */
  private async replacePublishChannel(old: ConfirmChannel): Promise<boolean> {
    const model = this.model;
    const publishModel = this.publishModel;
    if (!model || !publishModel) return false;
    const fresh = await publishModel.createConfirmChannel();
    if (this.model !== model || this.publishCh !== old) {
      // The connection changed meanwhile: its own channel stands.
      await fresh.close().catch(() => undefined);
      return false;
    }
    this.publisher.watch(fresh);
    this.guard(model, fresh);
    this.retired.add(old);
    this.liveChannels.delete(old);
    this.publishCh = fresh;
    return true;
  }

  /** Acks of the consume channel, one `multiple` ack per event-loop turn (ack-batcher.ts). */
  private ackBatcher(ch: Channel): AckBatcher<AckMeta> {
    // The channel closed under us: what was not sent is redelivered by the broker.
    return channelAcks<AckMeta>(ch, (batcher) => this.dropAcks(batcher));
  }

  /** A consume channel is gone: acks still waiting in its batcher are stale settles, never silent. */
  private dropAcks(batcher: AckBatcher<AckMeta>): void {
    for (const m of batcher.drop()) this.staleSettle(m.queue, 'ack', m.correlationId);
  }

  private lost(model: ChannelModel, err: Error | undefined): void {
    if (this.model !== model) return;
    // Lost while being set up: open() fails with it and its caller tries the next URL.
    const established = this.connected;
    // Before anyone hears of the loss, so that what they check next (Delivery.live) already says so.
    if (this.consumeCh) this.liveChannels.delete(this.consumeCh);
    if (this.publishCh) this.liveChannels.delete(this.publishCh);
    if (this.acks) this.dropAcks(this.acks);
    this.acks = undefined;
    this.lostAt ??= Date.now();
    this.watch.lost();
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
    const delay = this.reconnects.failed();
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
        const next = this.reconnects.failed();
        this.opts.logger.warn(`broker reconnect failed, ${this.reconnects.describe(next)}`, {
          error: coerceError(err).message,
        });
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
    this.watch.stop();
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
    const channels = this.watch.blocked ? [this.consumeCh] : [this.consumeCh, this.publishCh];
    this.consumeCh = undefined;
    this.publishCh = undefined;
    for (const ch of channels) if (ch) await ch.close().catch(() => undefined);
    if (publishModel) await publishModel.close().catch(() => undefined);
    if (model) await model.close().catch(() => undefined);
  }
}
