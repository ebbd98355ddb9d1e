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
};
