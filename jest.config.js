/** @type {import('jest').Config} */
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: 'tsconfig.json',
        // The same @nestjs/swagger plugin the build runs, so tests see the OpenAPI document users get.
        astTransformers: {
          before: [
            {
              path: '<rootDir>/test/support/swagger-transformer.js',
              options: {
                classValidatorShim: true,
                introspectComments: true,
                dtoFileNameSuffix: ['.dto.ts'],
                controllerFileNameSuffix: ['.controller.ts'],
              },
            },
          ],
        },
      },
    ],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
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
  maxWorkers: 2,
};
