// ts-jest in ESM mode: type checking is `npm run typecheck`'s job, so tests only transpile.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  testMatch: ['<rootDir>/spec/**/*.test.ts'],
  // The fault suite restarts its own brokers and databases for minutes: `npm run test:faults` (jest.faults.config.js).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/spec/faults/'],
  testTimeout: 60000,
};
