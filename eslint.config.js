import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** One block per room of lib/: Smarter's code, and the rooms above it, are out of its reach. */
function libLayers(above) {
  const smarter = ['**/tasks/**', '**/beat/**', '../tasks/*', '../beat/*'];
  return Object.entries(above).map(([room, rooms]) => ({
    files: room === 'base' ? ['lib/*.ts'] : [`lib/${room}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: smarter, message: 'lib/ is a generic Celery worker: it knows nothing of Smarter.' },
            ...(rooms.length
              ? [
                  {
                    group: rooms.map((r) => `**/${r}/*`),
                    message: `lib/${room}/ sits below ${rooms.join(', ')}: an import from there would run back up.`,
                  },
                ]
              : []),
          ],
        },
      ],
    },
  }));
}

/** Smarter's apps under tasks/: each a room that reaches another only through that one's index.ts. */
const APPS = [
  'account',
  'guardrail',
  'infrastructure',
  'llmclient',
  'llmhost',
  'mcpclient',
  'plugin',
  'prompt',
  'provider',
  'vectorstore',
];
/** The only apps an app may use (through their index.ts), as Smarter's do: llmhost charges accounts and copies llmclient's A record. */
const APP_USES = { llmhost: ['account', 'llmclient'] };
/**
 * The rooms of tasks/ below the apps, each above those it may import: env/ (the task environment and Smarter's
 * platform settings), secret/ on db/, and cloud/ and db/ at the bottom, apart. Each row lists the rooms it sits below.
 */
const SHARED = {
  env: [],
  secret: ['env'],
  cloud: ['env', 'secret', 'db'],
  db: ['env', 'secret', 'cloud'],
};
/** What assembles the worker from the apps: above every app. */
const ASSEMBLY = ['index.js', 'settings.js', 'system.js', 'worker-main.js', 'main.js', 'cli/*', 'celery/*'];
/** beat/ (the scheduler, which reads the task catalog) and bin/ (`celery`, over worker and beat) sit above tasks/. */
const ABOVE_TASKS = {
  group: ['../beat/*', '../../beat/*', '../../../beat/*', '../bin/*', '../../bin/*', '../../../bin/*'],
  message: 'tasks/ sits below beat/ and bin/: an import from there would run back up.',
};
const NEVER_WAIT = [
  { name: 'node:timers/promises', message: 'Never wait in a task: use ctx.checkAgain().' },
  { name: 'timers/promises', message: 'Never wait in a task: use ctx.checkAgain().' },
];

/**
 * Layers inside tasks/: the assembly, the apps, the shared rooms, and the ground (tasks/errors.ts, catalog.ts,
 * smarter-env.ts). An app reaches another only by its index.ts and only where APP_USES says; a shared room imports no
 * app and no room above it; the ground imports nothing of tasks/. The timers rule is repeated: one rule per file.
 */
function taskRooms() {
  const block = (files, patterns, ignores = []) => ({
    files,
    ignores,
    rules: { 'no-restricted-imports': ['error', { paths: NEVER_WAIT, patterns: [...patterns, ABOVE_TASKS] }] },
  });
  const assembly = (room) => ({
    group: ASSEMBLY.map((a) => `../${a}`),
    message: `tasks/${room}/ sits below what assembles the worker (tasks/index.ts, settings.ts, system.ts, worker-main.ts, cli/, celery/).`,
  });
  const app = (room) =>
    block(
      [`tasks/${room}/**/*.ts`],
      [
        {
          group: APPS.filter((o) => o !== room).flatMap((o) =>
            (APP_USES[room] ?? []).includes(o) ? [`../${o}/*`, `!../${o}/index.js`] : [`../${o}/*`],
          ),
          message: `tasks/${room}/ reaches another app only through its index.ts, and only the apps it uses (${(APP_USES[room] ?? []).join(', ') || 'none'}); the shared rooms are tasks/env, tasks/db, tasks/cloud, tasks/secret.`,
        },
        assembly(room),
      ],
    );
  const shared = ([room, above]) =>
    block(
      [`tasks/${room}/**/*.ts`],
      [
        {
          group: APPS.map((o) => `../${o}/*`),
          message: `tasks/${room}/ is shared by the apps and sits below them: it imports none (name a port here instead).`,
        },
        ...(above.length
          ? [
              {
                group: above.map((r) => `../${r}/*`),
                message: `tasks/${room}/ sits below ${above.map((r) => `tasks/${r}`).join(', ')}: an import from there would run back up.`,
              },
            ]
          : []),
        assembly(room),
      ],
    );
  const ground = block(
    ['tasks/errors.ts', 'tasks/catalog.ts', 'tasks/smarter-env.ts'],
    [
      {
        group: ['./*/*', ...ASSEMBLY.map((a) => `./${a}`)],
        message: 'tasks/errors.ts, catalog.ts and smarter-env.ts are the ground of tasks/: they import nothing of it.',
      },
    ],
  );
  const top = block(['tasks/*.ts'], [], ['tasks/errors.ts', 'tasks/catalog.ts', 'tasks/smarter-env.ts']);
  return [top, ...APPS.map(app), ...Object.entries(SHARED).map(shared), ground];
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'charts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      // Interface implementations are async by contract even when one has nothing to await.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      curly: ['error', 'multi-line'],
      'no-restricted-imports': 'off',
    },
  },
  // lib/ knows nothing of Smarter: it never imports tasks/ or beat/. Inside lib/, arrows run only downwards:
  // app/ assembles the worker from every other room; each room imports only the rooms below it, and lib/errors.ts
  // and lib/logger.ts (base) none.
  ...libLayers({
    app: [],
    // doctor/ (one-shot checks for `doctor`) reads through the broker and the dead-letter tools.
    doctor: ['app'],
    control: ['app', 'doctor'],
    deadletter: ['app', 'control', 'doctor'],
    worker: ['app', 'doctor', 'control', 'deadletter'],
    // tracing/ (OpenTelemetry, loaded only when on) wraps a run and the broker's publishes for the worker.
    tracing: ['app', 'doctor', 'control', 'deadletter', 'worker'],
    backend: ['app', 'doctor', 'control', 'deadletter', 'worker', 'tracing', 'registry'],
    registry: ['app', 'doctor', 'control', 'deadletter', 'worker', 'tracing', 'backend', 'broker', 'config'],
    broker: ['app', 'doctor', 'control', 'deadletter', 'worker', 'tracing', 'backend', 'registry'],
    protocol: [
      'app',
      'doctor',
      'control',
      'deadletter',
      'worker',
      'tracing',
      'backend',
      'registry',
      'broker',
      'config',
    ],
    config: [
      'app',
      'doctor',
      'control',
      'deadletter',
      'worker',
      'tracing',
      'backend',
      'registry',
      'broker',
      'protocol',
    ],
    base: [
      'app',
      'doctor',
      'control',
      'deadletter',
      'worker',
      'tracing',
      'backend',
      'registry',
      'broker',
      'protocol',
      'config',
    ],
  }),
  {
    // Never wait in a task (ADR-030): a task that needs time reschedules itself instead of sleeping.
    files: ['tasks/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Never wait in a task: use ctx.checkAgain().' },
      ],
      'no-restricted-imports': ['error', { paths: NEVER_WAIT }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='setTimeout']",
          message: 'Never wait in a task: use ctx.checkAgain().',
        },
      ],
    },
  },
  // Inside tasks/, arrows run only downwards: the assembly, the apps (another app only through its index.ts, and
  // only one it uses), the shared rooms (env above secret above db; cloud apart), the ground.
  ...taskRooms(),
  {
    // amqplib's codec extension (lib/broker/amqp/amqp-codec.ts) must load before amqplib: one way in.
    files: ['lib/broker/amqp/**/*.ts', 'spec/**/*.ts'],
    ignores: ['lib/broker/amqp/amqplib.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'amqplib',
              allowTypeImports: true,
              message: 'Import amqplib from lib/broker/amqp/amqplib.ts: its codec extension must load first.',
            },
          ],
        },
      ],
    },
  },
  {
    // Only lib/broker/amqp/ knows RabbitMQ: everything else speaks the broker contract (lib/broker/broker.ts)
    // and gets its broker from lib/broker/create-broker.ts.
    files: ['lib/**/*.ts', 'tasks/**/*.ts', 'beat/**/*.ts'],
    ignores: ['lib/broker/amqp/**/*.ts', 'lib/broker/create-broker.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'amqplib',
              message: 'Only lib/broker/amqp/ talks to RabbitMQ: use the broker contract (lib/broker/broker.ts).',
            },
          ],
          patterns: [
            {
              group: ['**/broker/amqp/*'],
              message:
                'Only lib/broker/amqp/ talks to RabbitMQ: use the broker contract (lib/broker/broker.ts) and create-broker.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['jest.config.js', 'jest.faults.config.js', 'eslint.config.js', '.prettierrc.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
