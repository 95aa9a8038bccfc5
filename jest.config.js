// ts-jest in ESM mode: type checking is `npm run typecheck`'s job, so tests only transpile.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  testMatch: ['<rootDir>/spec/**/*.test.ts'],
  testTimeout: 60000,
};
