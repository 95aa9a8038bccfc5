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
/** The shared rooms of tasks/, below every app: they import no app at all. */
const SHARED = ['cloud', 'db', 'secret'];
const NEVER_WAIT = [
  { name: 'node:timers/promises', message: 'Never wait in a task: use ctx.checkAgain().' },
  { name: 'timers/promises', message: 'Never wait in a task: use ctx.checkAgain().' },
];

/** tasks/<app> imports another app only by its index; tasks/{cloud,db,secret} import no app (the timers rule repeated: one rule per file). */
function taskRooms() {
  const app = (room) => ({
    files: [`tasks/${room}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: NEVER_WAIT,
          patterns: [
            {
              group: APPS.filter((o) => o !== room).flatMap((o) => [`../${o}/*`, `!../${o}/index.js`]),
              message: `tasks/${room}/ reaches another app only through its index.ts (or a shared room: tasks/db, tasks/cloud, tasks/secret).`,
            },
          ],
        },
      ],
    },
  });
  const shared = (room) => ({
    files: [`tasks/${room}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: NEVER_WAIT,
          patterns: [
            {
              group: APPS.map((o) => `../${o}/*`),
              message: `tasks/${room}/ is shared by the apps and sits below them: it imports none (name a port here instead).`,
            },
          ],
        },
      ],
    },
  });
  return [...APPS.map(app), ...SHARED.map(shared)];
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
  // Inside tasks/, each app is a room: another app is reached through its index.ts, and the shared rooms import no app.
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
