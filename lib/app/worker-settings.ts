/**
 * The worker's own settings, one row each: Celery's names and flags, so a Celery operator finds what they know.
 * What a value's text means is in setting-values.ts; lib/config/settings.ts reads them.
 */
import os from 'node:os';
import type { LogLevel } from '../logger.js';
import type { DelayQueueType } from '../broker/broker.js';
import { DEFAULT_MAX_BODY_BYTES, type Serializer } from '../protocol/content.js';
import type { ControlPolicy } from '../control/policy.js';
import type { UnknownTaskPolicy } from '../worker/intake/forward.js';
import { parsers, type Setting } from '../config/settings.js';
import { type Annotations, parseAnnotations } from './annotations.js';
import { DEFAULT_TLS, type TlsSettings, parseTlsSetting } from '../config/tls.js';
import {
  type RedisTransportOptions,
  accept,
  autoscaleRange,
  backendUrl,
  bindAddress,
  brokerUrl,
  byteSize,
  controlPolicy,
  delayLevels,
  logLevel,
  octalMask,
  optPositiveInt,
  optRateLimit,
  positiveSeconds,
  transportOptions,
  unknownTaskPolicy,
} from './setting-values.js';

const setting = <T>(s: Setting<T>): Setting<T> => s;

/** Tasks run at once when `-c` is not given (see `concurrency`). */
export const DEFAULT_CONCURRENCY = 32;

export const WORKER_SETTINGS = {
  brokerUrl: setting({
    env: ['CELERY_BROKER_URL'],
    default: 'amqp://guest:guest@localhost:5672//',
    parse: brokerUrl,
    secret: true,
    doc: "Broker URL: RabbitMQ (`amqp://`, `amqps://`) or Redis in kombu's layout (`redis://`, `rediss://`, `sentinel://`). Several RabbitMQ nodes as Celery's failover list, `amqp://a;amqp://b`: tried in turn (round-robin), the next one on loss.",
  }),
  brokerUseSsl: setting<TlsSettings>({
    env: ['CELERY_BROKER_USE_SSL'],
    default: DEFAULT_TLS,
    shownDefault: 'off (`amqps://` verifies against the system CAs)',
    parse: parseTlsSetting,
    doc: 'Broker TLS (`amqps://`, `rediss://`) as Celery\'s `broker_use_ssl`: `true`, or JSON `{"ca_certs", "certfile", "keyfile", "cert_reqs", "server_hostname"}` (the `ssl_` forms too). The server\'s certificate is verified unless `cert_reqs` is `CERT_NONE`; `true` or an object turns `amqp://` into `amqps://` and `redis://` into TLS.',
  }),
  brokerConnectionTimeout: setting({
    env: ['CELERY_BROKER_CONNECTION_TIMEOUT'],
    default: 4,
    parse: parsers.seconds,
    doc: 'Seconds to open a broker connection (TCP, TLS, AMQP handshake) before the next URL is tried (Celery default 4).',
  }),
  taskDefaultQueueType: setting<DelayQueueType>({
    env: ['CELERY_TASK_DEFAULT_QUEUE_TYPE'],
    default: 'classic',
    parse: parsers.oneOf('classic', 'quorum'),
    doc: 'Type of the task queues this worker creates (Celery 5.5 `task_default_queue_type`); `quorum` for a RabbitMQ cluster. A queue that exists is used as it is.',
  }),
  resultBackend: setting({
    env: ['CELERY_RESULT_BACKEND'],
    flag: { long: 'result-backend' },
    default: '',
    parse: backendUrl,
    secret: true,
    doc: 'Result backend: `redis://…`, `rediss://…` (TLS), `rpc://`, or empty for none.',
  }),
  redisBackendUseSsl: setting<TlsSettings>({
    env: ['CELERY_REDIS_BACKEND_USE_SSL'],
    default: DEFAULT_TLS,
    shownDefault: 'off (`rediss://` verifies against the system CAs)',
    parse: parseTlsSetting,
    doc: 'TLS of a `rediss://` result backend as Celery\'s `redis_backend_use_ssl`: JSON `{"ssl_ca_certs", "ssl_certfile", "ssl_keyfile", "ssl_cert_reqs"}`; the same keys may be query parameters of the URL (they win). Verified unless `ssl_cert_reqs` is `CERT_NONE`.',
  }),
  queues: setting<string[]>({
    env: ['SMARTER_WORKER_QUEUES'],
    flag: { long: 'queues', short: 'Q' },
    default: [],
    parse: parsers.list,
    doc: "Queues to consume, comma-separated (Celery `-Q`). Default: the application's default queue.",
  }),
  concurrency: setting({
    env: ['CELERY_WORKER_CONCURRENCY'],
    flag: { long: 'concurrency', short: 'c' },
    // Not Celery's CPU count: a slot here is a promise, not a process. 32 slots × the multiplier of 4 keep a
    // prefetch window of 128 in flight, which is what drains a queue as fast as a bare amqplib consumer
    // (prefetch 100); at 2 slots (CPUs on the CI machine) the worker waits on the broker (docs/performance.md).
    default: DEFAULT_CONCURRENCY,
    parse: parsers.int(1, 10_000),
    doc: 'Tasks run at once by this process (Celery `-c`). Default 32: slots are async, not processes (docs/performance.md).',
  }),
  prefetchMultiplier: setting({
    env: ['CELERY_WORKER_PREFETCH_MULTIPLIER'],
    flag: { long: 'prefetch-multiplier' },
    default: 4,
    parse: parsers.int(0, 65_535),
    doc: 'Prefetch = multiplier × concurrency (0 = unlimited), as Celery.',
  }),
  disablePrefetch: setting({
    env: ['CELERY_WORKER_DISABLE_PREFETCH'],
    flag: { long: 'disable-prefetch', boolean: true },
    default: false,
    parse: parsers.bool,
    doc: 'Take a message only when a slot can run it (Celery 5.6 `--disable-prefetch`): the prefetch is the concurrency, whatever the multiplier.',
  }),
  autoscale: setting<{ max: number; min: number } | null>({
    env: ['SMARTER_WORKER_AUTOSCALE'],
    flag: { long: 'autoscale' },
    default: null,
    parse: autoscaleRange,
    doc: 'Celery `--autoscale MAX,MIN`: the slots grow to MAX while messages wait for one and shrink back to MIN after 30 s without a backlog; the prefetch is sized for MAX. Overrides `-c`.',
  }),
  maxTasksPerChild: setting<number | null>({
    env: ['CELERY_WORKER_MAX_TASKS_PER_CHILD'],
    flag: { long: 'max-tasks-per-child' },
    default: null,
    parse: optPositiveInt,
    doc: 'After this many tasks the worker stops taking messages, lets its runs finish, and is replaced by a fresh process (docs/operations.md#recycling).',
  }),
  maxMemoryPerChild: setting<number | null>({
    env: ['CELERY_WORKER_MAX_MEMORY_PER_CHILD'],
    flag: { long: 'max-memory-per-child' },
    default: null,
    parse: optPositiveInt,
    doc: 'KiB of resident memory (RSS), checked after each task, past which the worker is replaced as with `--max-tasks-per-child`.',
  }),
  maxAbandonedRuns: setting<number | null>({
    env: ['SMARTER_WORKER_MAX_ABANDONED_RUNS'],
    default: null,
    parse: optPositiveInt,
    doc: 'Runs given up on at their hard time limit (or by a terminate) whose code still goes, holding what it holds, past which the worker is replaced as with `--max-tasks-per-child` (a Python child would have been killed); checked as each task ends. Empty or 0: never.',
  }),
  poolRestarts: setting({
    env: ['CELERY_WORKER_POOL_RESTARTS'],
    default: false,
    parse: parsers.bool,
    doc: 'Obey the `pool_restart` control command (a recycle: the worker is replaced by a fresh process), as Celery obeys it only with `worker_pool_restarts`.',
  }),
  purge: setting({
    env: ['SMARTER_WORKER_PURGE'],
    flag: { long: 'purge', boolean: true },
    default: false,
    parse: parsers.bool,
    doc: 'Celery `--purge`/`--discard`: empty the queues to consume (ready messages only) before consuming them; the count is logged.',
  }),
  excludeQueues: setting<string[]>({
    env: ['SMARTER_WORKER_EXCLUDE_QUEUES'],
    flag: { long: 'exclude-queues', short: 'X' },
    default: [],
    parse: parsers.list,
    doc: 'Celery `-X`: queues not to consume, taken out of `-Q` (or of the default queue).',
  }),
  optimization: setting<'default' | 'fair'>({
    env: ['SMARTER_WORKER_OPTIMIZATION'],
    flag: { long: 'optimization', short: 'O' },
    default: 'default',
    parse: parsers.oneOf('default', 'fair'),
    doc: "Celery `-O default|fair`. Both behave as Celery's `fair`: a message is given to a slot only when the slot is free, never queued behind a busy one.",
  }),
  withoutGossip: setting({
    env: ['SMARTER_WORKER_WITHOUT_GOSSIP'],
    flag: { long: 'without-gossip', boolean: true },
    default: false,
    parse: parsers.bool,
    doc: "Celery `--without-gossip`. This worker never consumes the other workers' events (no gossip, no elections), so it is always so.",
  }),
  withoutHeartbeat: setting({
    env: ['SMARTER_WORKER_WITHOUT_HEARTBEAT'],
    flag: { long: 'without-heartbeat', boolean: true },
    default: false,
    parse: parsers.bool,
    doc: 'Celery `--without-heartbeat`: no worker-online, worker-heartbeat and worker-offline events (Flower then shows the worker offline).',
  }),
  heartbeatInterval: setting({
    env: ['SMARTER_WORKER_HEARTBEAT_INTERVAL'],
    flag: { long: 'heartbeat-interval' },
    default: 2,
    parse: positiveSeconds,
    doc: 'Celery `--heartbeat-interval`: seconds between two worker-heartbeat events.',
  }),
  pidfile: setting({
    env: ['CELERY_WORKER_PIDFILE'],
    flag: { long: 'pidfile' },
    default: '',
    parse: parsers.string,
    doc: "Celery `--pidfile`: a file that holds the worker's process id while it runs (the supervisor's under `celery worker`), removed at exit; a file of a live process refuses the start.",
  }),
  logfile: setting({
    env: ['CELERY_WORKER_LOGFILE'],
    flag: { long: 'logfile', short: 'f' },
    default: '',
    parse: parsers.string,
    doc: 'Celery `--logfile`/`-f`: the log lines are appended to this file instead of stdout.',
  }),
  umask: setting<number | null>({
    env: ['CELERY_WORKER_UMASK'],
    flag: { long: 'umask' },
    default: null,
    parse: octalMask,
    doc: 'Celery `--umask`: the mask of the files the worker creates (state db, pid file, log file).',
  }),
  hostname: setting({
    env: ['CELERY_WORKER_HOSTNAME'],
    flag: { long: 'hostname', short: 'n' },
    default: 'celery@%h',
    parse: parsers.string,
    doc: 'Node name; `%h` = host name, `%n` = its first label, `%d` = its domain.',
  }),
  taskEvents: setting({
    env: ['CELERY_WORKER_SEND_TASK_EVENTS'],
    flag: { long: 'task-events', short: 'E', boolean: true },
    default: false,
    parse: parsers.bool,
    doc: 'Send task events for Flower and `celery events` (Celery `-E`).',
  }),
  withoutMingle: setting({
    env: ['SMARTER_WORKER_WITHOUT_MINGLE'],
    flag: { long: 'without-mingle', boolean: true },
    default: false,
    parse: parsers.bool,
    doc: "Skip the start-up sync (Celery's mingle, `--without-mingle`): by default the worker asks the running workers, Python's or ours, for their revoked ids and clock for 1 s before it consumes.",
  }),
  logLevel: setting<LogLevel>({
    env: ['CELERY_WORKER_LOGLEVEL', 'LOG_LEVEL'],
    flag: { long: 'loglevel', short: 'l' },
    default: 'info',
    parse: logLevel,
    doc: 'DEBUG, INFO, WARNING or ERROR. Logs are JSON lines when stdout is not a terminal.',
  }),
  acceptContent: setting({
    env: ['CELERY_ACCEPT_CONTENT'],
    default: ['json'] as Serializer[],
    parse: accept,
    doc: 'Accepted body serializers: json, msgpack, yaml. Pickle is always refused.',
  }),
  taskTimeLimit: setting<number | null>({
    env: ['CELERY_TASK_TIME_LIMIT'],
    flag: { long: 'time-limit' },
    default: null,
    parse: parsers.optSeconds,
    doc: "Default hard time limit in seconds (a message's `timelimit` header wins).",
  }),
  taskSoftTimeLimit: setting<number | null>({
    env: ['CELERY_TASK_SOFT_TIME_LIMIT'],
    flag: { long: 'soft-time-limit' },
    default: null,
    parse: parsers.optSeconds,
    doc: "Default soft time limit in seconds: the task's AbortSignal fires.",
  }),
  taskAnnotations: setting<Annotations>({
    env: ['CELERY_TASK_ANNOTATIONS'],
    default: new Map(),
    shownDefault: 'none',
    parse: parseAnnotations,
    doc: 'Celery\'s `task_annotations` as JSON: per task name, or `*` for every task, any of `rate_limit`, `time_limit`, `soft_time_limit`, `acks_late`, `max_retries`, laid over the task\'s own (the name over `*`). E.g. `{"*": {"rate_limit": "10/s"}}`.',
  }),
  taskDefaultRateLimit: setting<string | null>({
    env: ['CELERY_TASK_DEFAULT_RATE_LIMIT'],
    default: null,
    parse: optRateLimit,
    doc: 'Rate limit of the tasks that declare none (`10/s`, `100/m`, `1000/h`), per worker, as Celery.',
  }),
  disableRateLimits: setting({
    env: ['CELERY_WORKER_DISABLE_RATE_LIMITS'],
    default: false,
    parse: parsers.bool,
    doc: "No task is rate limited, whatever it or the annotations declare (Celery's `worker_disable_rate_limits`).",
  }),
  taskAcksLate: setting({
    env: ['CELERY_TASK_ACKS_LATE'],
    default: false,
    parse: parsers.bool,
    doc: 'Ack after the task ends instead of when it starts, unless a task says otherwise.',
  }),
  taskAcksOnFailureOrTimeout: setting({
    env: ['CELERY_TASK_ACKS_ON_FAILURE_OR_TIMEOUT'],
    default: true,
    parse: parsers.bool,
    doc: 'With late ack: ack failed tasks (true) or reject them to the dead-letter queue (false).',
  }),
  taskTrackStarted: setting({
    env: ['CELERY_TASK_TRACK_STARTED'],
    default: false,
    parse: parsers.bool,
    doc: 'Store STARTED before a task runs.',
  }),
  taskIgnoreResult: setting({
    env: ['CELERY_TASK_IGNORE_RESULT'],
    default: false,
    parse: parsers.bool,
    doc: 'Store no results unless a message asks for it.',
  }),
  resultExtended: setting({
    env: ['CELERY_RESULT_EXTENDED'],
    default: false,
    parse: parsers.bool,
    doc: "Celery's `result_extended`: each stored state (Redis backend) also holds the task's `name`, `args`, `kwargs`, `worker`, `retries` and `queue`, which Python's `AsyncResult` reads.",
  }),
  brokerConnectionMaxRetries: setting<number | null>({
    env: ['CELERY_BROKER_CONNECTION_MAX_RETRIES'],
    default: null,
    shownDefault: 'none (Celery: 100)',
    parse: optPositiveInt,
    doc: "Celery's `broker_connection_max_retries`: once a connection attempt and this many retries after it have failed in a row (at start or after a loss), the worker gives up and exits with code 1; 0 or None retries forever. Unset, it retries forever: a pod that exits is restarted to the same outage.",
  }),
  cancelOnConnectionLoss: setting({
    env: ['CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS'],
    default: true,
    parse: parsers.bool,
    doc: "Celery's `worker_cancel_long_running_tasks_on_connection_loss`: a late-ack run whose message came on a connection that is lost is cancelled (its AbortSignal fires, RETRY is stored, no success), since the broker gives the message to another worker; off, it runs on and may run twice at once.",
  }),
  resultExpires: setting<number | null>({
    env: ['CELERY_RESULT_EXPIRES'],
    default: 86_400,
    parse: parsers.optSeconds,
    doc: 'Seconds a stored result lives (redis SETEX).',
  }),
  shutdownGrace: setting({
    env: ['SMARTER_WORKER_SHUTDOWN_GRACE', 'CELERY_WORKER_SOFT_SHUTDOWN_TIMEOUT'],
    default: 60,
    parse: parsers.seconds,
    doc: 'Warm shutdown: seconds to let running tasks finish before they are cut short and requeued.',
  }),
  brokerHeartbeat: setting({
    env: ['CELERY_BROKER_HEARTBEAT'],
    default: 120,
    parse: parsers.int(0, 3600),
    doc: 'AMQP heartbeat in seconds (Celery default 120).',
  }),
  brokerTransportOptions: setting<RedisTransportOptions>({
    env: ['CELERY_BROKER_TRANSPORT_OPTIONS'],
    default: { visibilityTimeout: 3600, masterName: null, globalKeyprefix: '' },
    shownDefault: '`{"visibility_timeout": 3600}`',
    parse: transportOptions,
    doc: "Redis broker only: Celery's `broker_transport_options` as JSON (`visibility_timeout` s, `master_name` for sentinel://, `global_keyprefix`), the same values as the Python workers.",
  }),
  delayedDelivery: setting({
    env: ['SMARTER_WORKER_DELAYED_DELIVERY'],
    default: true,
    parse: parsers.bool,
    doc: "Park countdowns and far ETAs in the broker's delay topology (Celery 5.5 native delayed delivery) instead of holding them unacked.",
  }),
  delayQueueType: setting<DelayQueueType>({
    env: ['SMARTER_WORKER_DELAY_QUEUE_TYPE'],
    default: 'quorum',
    parse: parsers.oneOf('quorum', 'classic'),
    doc: "Type of the `celery_delayed_*` queues, as Celery's `broker_native_delayed_delivery_queue_type`.",
  }),
  delayCanaryInterval: setting({
    env: ['SMARTER_WORKER_DELAY_CANARY_INTERVAL'],
    default: 60,
    parse: parsers.seconds,
    doc: 'Seconds between two canary countdowns sent through each watched delay level by the one replica holding the canary lock (needs the HTTP endpoint; 0 = off). A canary later than its level\'s bound by more than the margin is logged, exported and makes /healthz "degraded".',
  }),
  delayCanaryMargin: setting({
    env: ['SMARTER_WORKER_DELAY_CANARY_MARGIN'],
    default: 30,
    parse: parsers.seconds,
    doc: "Seconds a canary countdown may arrive after its level's bound (2^level s) before the level is reported late.",
  }),
  delayCanaryLevels: setting<number[]>({
    env: ['SMARTER_WORKER_DELAY_CANARY_LEVELS'],
    default: [0, 1, 2, 3, 4, 5],
    shownDefault: '`0,1,2,3,4,5`',
    parse: delayLevels,
    doc: 'Delay levels the canary watches, comma-separated; the canary of level L is a countdown of 2^L s (the levels that carry short countdowns are the ones a stall hurts first).',
  }),
  etaHoldMax: setting({
    env: ['SMARTER_WORKER_ETA_HOLD_MAX'],
    default: 5,
    parse: parsers.seconds,
    doc: 'An ETA at most this many seconds away is held by the worker; a further one is parked in the broker.',
  }),
  waitBudget: setting<number | null>({
    env: ['SMARTER_WORKER_WAIT_BUDGET'],
    default: 30,
    parse: parsers.optSeconds,
    doc: 'A run still going after this many seconds is reported (log line + metric) as waiting instead of working.',
  }),
  stateDb: setting({
    env: ['CELERY_WORKER_STATE_DB'],
    flag: { long: 'statedb', short: 'S' },
    default: '',
    parse: parsers.string,
    doc: 'File that keeps revoked task ids across restarts (Celery `--statedb`); empty keeps them in memory only.',
  }),
  httpPort: setting({
    env: ['SMARTER_WORKER_HTTP_PORT'],
    flag: { long: 'http-port' },
    default: 0,
    parse: parsers.int(0, 65_535),
    doc: 'Port of /healthz, /readyz and /metrics (Prometheus); 0 turns the endpoint off.',
  }),
  httpHost: setting({
    env: ['SMARTER_WORKER_HTTP_HOST'],
    flag: { long: 'http-host' },
    default: '0.0.0.0',
    parse: bindAddress,
    doc: 'Address the HTTP endpoint binds. Every interface by default, since Kubernetes probes come to the pod IP; `127.0.0.1` keeps it local.',
  }),
  maxBodySize: setting({
    env: ['SMARTER_WORKER_MAX_BODY_SIZE'],
    flag: { long: 'max-body-size' },
    default: DEFAULT_MAX_BODY_BYTES,
    shownDefault: '`8MiB`',
    parse: byteSize,
    doc: 'Heaviest task message body taken, as sent and once decompressed (`8MiB`, `512KB`, bytes; 0 = no limit); a heavier one goes to the dead-letter queue undecoded (on Redis it is never fetched).',
  }),
  control: setting<ControlPolicy>({
    env: ['SMARTER_WORKER_CONTROL'],
    default: { mode: 'all' },
    shownDefault: '`all`',
    parse: controlPolicy,
    doc: "Remote-control commands obeyed: `all` (Celery's behaviour), `inspect` (ping and inspect only: no shutdown, revoke, rate/time limits, consumer changes), or a comma-separated list of the changing commands to allow on top of inspect. Anyone who can publish to the broker can send them.",
  }),
  deadLetterSuffix: setting({
    env: ['SMARTER_WORKER_DEAD_LETTER_SUFFIX'],
    default: '.dead_letter',
    parse: parsers.string,
    doc: 'Poison messages of queue Q are kept in queue Q + this suffix for an operator to inspect.',
  }),
  unknownTasks: setting<UnknownTaskPolicy>({
    env: ['SMARTER_WORKER_UNKNOWN_TASKS'],
    flag: { long: 'unknown-tasks' },
    default: { mode: 'reject' },
    shownDefault: '`reject`',
    parse: unknownTaskPolicy,
    doc: "A task name this worker does not implement: `reject` it to the dead-letter queue (Celery's NotRegistered), or `forward:<queue>` it unchanged to the queue of the workers that do (a migration).",
  }),
};

export type WorkerSettings = typeof WORKER_SETTINGS;

/** Celery's node-name expansion (`celery.utils.nodenames`). */
export function expandNodeName(pattern: string, host: string = os.hostname()): string {
  const [first, ...rest] = host.split('.');
  const name = pattern
    .replace(/%h/g, host)
    .replace(/%n/g, first ?? host)
    .replace(/%d/g, rest.join('.'));
  return name.includes('@') ? name : `celery@${name}`;
}
