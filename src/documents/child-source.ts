import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** This folder's TypeScript files, with their paths below it. */
function sourcesBelow(dir: string, under = ''): string[] {
  return fs.readdirSync(path.join(dir, under), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(under, e.name);
    if (e.isDirectory()) return sourcesBelow(dir, rel);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/**
 * The file the parser's process runs: the compiled document-child.js beside this file when sift
 * runs built. Under the test runner this folder is TypeScript: its files are transpiled once (no
 * type check) into a folder named by their digest, under the project's node_modules/.cache so
 * that they find the project's packages, and the child loads no compiler and starts, and is
 * limited, as it does in production.
 */
export function childModule(): string {
  if (__filename.endsWith('.js')) return path.join(__dirname, 'document-child.js');
  const files = sourcesBelow(__dirname);
  const sources = files.map((f) => [f, fs.readFileSync(path.join(__dirname, f), 'utf8')] as const);
  const digest = crypto.createHash('sha256');
  for (const [f, src] of sources) digest.update(f).update('\0').update(src).update('\0');
  const cache = path.resolve(__dirname, '..', '..', 'node_modules', '.cache');
  const dir = path.join(cache, `sift-documents-${digest.digest('hex').slice(0, 16)}`);
  const entry = path.join(dir, 'document-child.js');
  if (fs.existsSync(entry)) return entry;
  const ts = require('typescript') as typeof import('typescript');
  fs.mkdirSync(cache, { recursive: true });
  const tmp = fs.mkdtempSync(`${dir}-`);
  for (const [f, src] of sources) {
    const out = ts.transpileModule(src, {
      fileName: f,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
    }).outputText;
    fs.mkdirSync(path.join(tmp, path.dirname(f)), { recursive: true });
    fs.writeFileSync(path.join(tmp, f.replace(/\.ts$/, '.js')), out);
  }
  // Moved into place whole: another process doing the same at once finds it complete or absent.
  try {
    fs.renameSync(tmp, dir);
  } catch {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return entry;
}

/** The pdfjs-dist package's folder: its legacy build, CMaps and standard font data are read from it. */
export function pdfjsRoot(): string {
  return path.resolve(path.dirname(require.resolve('pdfjs-dist')), '..');
}
