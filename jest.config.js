/**
 * Tests run through the real HTTP server against real PostgreSQL (see test/harness).
 *
 * Tests that assert latencies (TIMED) run alone, after the rest: `npm test` runs `jest`, then `JEST_TIMED=1 jest`. Run
 * beside another file (a headless browser, a load test) they would measure the machine rather than the service
 * (docs/testing.md). `JEST_TIMED=1 npx jest` runs just them.
 */
const TIMED = ['/test/http/fair-sharing\\.test\\.ts$'];
const timed = process.env.JEST_TIMED === '1';

module.exports = {
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  ...(timed ? { testRegex: TIMED, testMatch: undefined } : { testPathIgnorePatterns: ['/node_modules/', ...TIMED] }),
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  globalSetup: '<rootDir>/test/harness/global-setup.ts',
  globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
};
