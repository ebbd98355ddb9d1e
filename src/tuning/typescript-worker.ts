/**
 * A worker thread started on a TypeScript file (sift run from its sources, as the test runner
 * does): Node's `require.extensions` gets a `.ts` loader that hands each file, transpiled, to the
 * module's `_compile`. Both are Node internals (the hook deprecated, still honoured by Node 20 and
 * 24); a built sift's workers load JavaScript and never run this. Worker code, as text: the worker
 * evaluates it before it requires its module.
 *
 * Each file is transpiled once (no type check) and kept under the project's node_modules/.cache,
 * named by the digest of its text and the compiler's version: a worker that finds them all there
 * loads no compiler. Loading the compiler and transpiling the extractor's files cost each worker
 * about 2 s of CPU (1.3 s before it was ready); from the cache 0.2 s, as built. The test suites
 * start two workers for every app they make.
 */
export const TYPESCRIPT_SOURCES = `
if (workerData.file.endsWith('.ts')) {
  const fs = require('node:fs');
  const path = require('node:path');
  const crypto = require('node:crypto');
  const tsRoot = path.dirname(require.resolve('typescript/package.json'));
  const cache = path.join(tsRoot, '..', '.cache', 'sift-ts');
  const salt = fs.readFileSync(path.join(tsRoot, 'package.json'));
  let ts;
  const transpile = (src) => {
    ts ??= require('typescript');
    return ts.transpileModule(src, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    }).outputText;
  };
  require.extensions['.ts'] = (m, f) => {
    const src = fs.readFileSync(f, 'utf8');
    const kept = path.join(cache, crypto.createHash('sha256').update(salt).update(src).digest('hex') + '.js');
    let out;
    try {
      out = fs.readFileSync(kept, 'utf8');
    } catch {
      out = transpile(src);
      // Written aside, then renamed: another worker reading it finds it whole or not at all.
      const tmp = kept + '.' + process.pid + '.' + require('node:worker_threads').threadId;
      try {
        fs.mkdirSync(cache, { recursive: true });
        fs.writeFileSync(tmp, out);
        fs.renameSync(tmp, kept);
      } catch {
        // A cache that cannot be written (a read-only node_modules) only costs the next worker a
        // transpile: this one has the output.
      }
    }
    m._compile(out, f);
  };
}
`;
