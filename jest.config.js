/**
 * The suites that read the OpenAPI document sift serves: compiled with the same @nestjs/swagger
 * plugin the build runs, so they see the document users get. The plugin needs the whole program
 * (type information): each file is compiled against it.
 */
const OPENAPI_SUITES = ['openapi.spec.ts', 'openapi-client.spec.ts', 'browser.spec.ts'].map(
  (f) => `<rootDir>/test/e2e/${f}`,
);

/**
 * The suites that time this process's event loop or a sift process's main thread. Beside another
 * suite on two cores (a crash suite's processes, say) their figures show that suite's load, not
 * sift's: `make test` runs every other suite first (SIFT_TIMING_PASS=0), then these alone, one at
 * a time (SIFT_TIMING_PASS=1). Unset, every suite runs as usual.
 */
const TIMING_SUITES = ['event-loop.spec.ts', 'main-thread.spec.ts'].map((f) => `<rootDir>/test/e2e/${f}`);
const TIMING_PASS = process.env.SIFT_TIMING_PASS;

const swaggerPlugin = {
  path: '<rootDir>/test/support/swagger-transformer.js',
  options: {
    classValidatorShim: true,
    introspectComments: true,
    dtoFileNameSuffix: ['.dto.ts'],
    controllerFileNameSuffix: ['.controller.ts'],
  },
};

/**
 * Every other suite is compiled a file at a time, without type information (tsconfig.test.json:
 * isolatedModules): `make typecheck` checks the types, and a compile against the whole program in
 * each jest worker cost about 10 s of CPU per suite (batch.spec 48 → 37 s, app.spec 17 → 8).
 */
const project = (name, testMatch, tsJest) => ({
  displayName: name,
  rootDir: '.',
  testEnvironment: 'node',
  testMatch,
  transform: { '^.+\\.ts$': ['ts-jest', tsJest] },
  moduleFileExtensions: ['ts', 'js', 'json'],
});

const sift = {
  ...project('sift', ['<rootDir>/test/**/*.spec.ts'], { tsconfig: 'tsconfig.test.json' }),
  testPathIgnorePatterns: [...OPENAPI_SUITES, ...(TIMING_PASS === '0' ? TIMING_SUITES : [])].map((s) =>
    s.replace('<rootDir>/', '/'),
  ),
};

/** @type {import('jest').Config} */
module.exports = {
  projects:
    TIMING_PASS === '1'
      ? [project('sift', TIMING_SUITES, { tsconfig: 'tsconfig.test.json' })]
      : [
          project('openapi', OPENAPI_SUITES, {
            tsconfig: 'tsconfig.json',
            astTransformers: { before: [swaggerPlugin] },
          }),
          sift,
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
