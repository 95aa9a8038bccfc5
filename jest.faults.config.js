// The fault suite (`npm run test:faults`): spec/faults only, which `npm test` leaves out.
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/spec/faults/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 300000,
};
