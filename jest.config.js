/**
 * The suites that time this process's event loop or a sift process's main thread. Beside another
 * suite on two cores (a crash suite's processes, say) their figures show that suite's load, not
 * sift's: `make test` runs every other suite first (SIFT_TIMING_PASS=0), then these alone, one at
 * a time (SIFT_TIMING_PASS=1). Unset, every suite runs as usual.
 */
const TIMING_SUITES = ['event-loop.spec.ts', 'main-thread.spec.ts'].map((f) => `<rootDir>/test/e2e/${f}`);
const TIMING_PASS = process.env.SIFT_TIMING_PASS;

/**
 * Suites are compiled a file at a time, without type information (tsconfig.test.json:
 * isolatedModules): `make typecheck` checks the types, and a compile against the whole program in
 * each jest worker cost about 10 s of CPU per suite (batch.spec 48 → 37 s, app.spec 17 → 8). The
 * OpenAPI document's suites read it from the built server, which `nest build` made with the
 * @nestjs/swagger plugin, as users get it.
 */
const sift = (testMatch, ignored) => ({
  displayName: 'sift',
  rootDir: '.',
  testEnvironment: 'node',
  testMatch,
  testPathIgnorePatterns: ignored.map((s) => s.replace('<rootDir>/', '/')),
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
});

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    TIMING_PASS === '1'
      ? sift(TIMING_SUITES, [])
      : sift(['<rootDir>/test/**/*.spec.ts'], TIMING_PASS === '0' ? TIMING_SUITES : []),
  ],
  // The PostgreSQL suites' server: the local one, or a throwaway one started for the run.
  globalSetup: '<rootDir>/test/support/pg-server.ts',
  globalTeardown: '<rootDir>/test/support/pg-server-stop.ts',
  testTimeout: 30000,
  // Suites run one at a time in a worker process, not in jest's own: one that grows past this is
  // replaced before the next suite (in-band, 53 suites' module registries grew the heap to about
  // 2 GB and the run ended in back-to-back garbage collections instead of exiting), and a worker
  // that a suite left with an open handle is ended when the run is over.
  workerIdleMemoryLimit: '1GB',
  // Two suites at a time (jest's default on two cores is one): most suites wait on child
  // processes, servers and timers, and each keeps to its own databases, ports and processes.
  // On two cores the whole suite took 579 s of jest this way against 963 s one at a time.
  maxWorkers: TIMING_PASS === '1' ? 1 : 2,
};
