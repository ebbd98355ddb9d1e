/**
 * A worker thread started on a TypeScript file (sift run from its sources, as the test runner
 * does): Node's `require.extensions` gets a `.ts` loader that transpiles each file with the
 * TypeScript compiler and hands it to the module's `_compile`. Both are Node internals (the hook
 * deprecated, still honoured by Node 20 and 24); a built sift's workers load JavaScript and never
 * run this. Worker code, as text: the worker evaluates it before it requires its module.
 */
export const TYPESCRIPT_SOURCES = `
if (workerData.file.endsWith('.ts')) {
  const ts = require('typescript');
  const fs = require('node:fs');
  require.extensions['.ts'] = (m, f) => m._compile(ts.transpileModule(fs.readFileSync(f, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  }).outputText, f);
}
`;
