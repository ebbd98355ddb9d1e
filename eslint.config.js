// @ts-check
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');
const house = require('./eslint-layers.js');

module.exports = tseslint.config(
  { ignores: ['dist/', 'dist-bench/', 'node_modules/', 'coverage/', 'test-output/', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/**/*.ts', 'migrations/**/*.ts'],
    plugins: { house },
    rules: { 'house/layers': 'error', 'house/private-paths': 'error' },
  },
);
