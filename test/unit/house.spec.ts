import * as fs from 'node:fs';
import * as path from 'node:path';
import { Linter } from 'eslint';
import * as tseslint from 'typescript-eslint';

/**
 * The house's rules (SPEC "The house"): imports flow down the layers, only src/tuning/ reaches
 * into a library's private files (and its README lists every file there), no source file is over
 * 300 lines. `make lint` runs the same rules; this suite makes CI fail on them too.
 */
const ROOT = path.join(__dirname, '..', '..');
const sources = (dir: string): string[] =>
  fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));

// The rules as `make lint` runs them (eslint.config.js), through ESLint's own linter.
const house = require('../../eslint-layers.js') as NonNullable<Linter.Config['plugins']>[string];
const config: Linter.Config[] = [
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser as Linter.Parser },
    plugins: { house },
    rules: { 'house/layers': 'error', 'house/private-paths': 'error' },
  },
];
const linter = new Linter({ configType: 'flat' });
const lint = (file: string, text: string) =>
  linter.verify(text, config, path.join(ROOT, file)).map((m) => `${m.ruleId}: ${m.message}`);

describe('the house', () => {
  it('no file of src/ is over 300 lines', () => {
    const long = sources('src')
      .map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n').length - 1] as const)
      .filter(([, n]) => n > 300);
    expect(long).toEqual([]);
  });

  it('src/ and migrations/ keep the import rules', () => {
    const broken = [...sources('src'), ...sources('migrations')].flatMap((f) =>
      lint(f, fs.readFileSync(path.join(ROOT, f), 'utf8')).map((m) => `${f}: ${m}`),
    );
    expect(broken).toEqual([]);
  });

  it('an import that climbs a layer fails, one down or within a folder passes', () => {
    expect(lint('src/dcache/x.ts', "export { JobLifecycle } from '../batch/job-lifecycle';\n")).toEqual([
      'house/layers: dcache may not import ../batch/job-lifecycle: batch sits above dcache',
    ]);
    expect(
      lint(
        'src/fetch/x.ts',
        "import { PageService } from '../pages/page.service';\nexport const p = PageService;\n",
      ),
    ).toEqual(['house/layers: fetch may not import ../pages/page.service: pages sits above fetch']);
    expect(lint('src/api/x.ts', "import '../mcp/server';\n")).toEqual([
      'house/layers: api may not import ../mcp/server: mcp and api sit side by side',
    ]);
    expect(lint('src/common/x.ts', "export const m = require('../main');\n")).toEqual([
      'house/layers: common may not import ../main: src sits above common',
    ]);
    expect(lint('src/pages/x.ts', "export * from '../dcache';\nexport * from './envelope';\n")).toEqual([]);
  });

  it("a library's private path is for src/tuning/ only", () => {
    const text = "export const Agent = require('undici/lib/dispatcher/agent');\n";
    expect(lint('src/fetch/x.ts', text)).toEqual([
      "house/private-paths: 'undici/lib/dispatcher/agent' is inside a package: reach for it from src/tuning/ (see its README)",
    ]);
    expect(lint('src/tuning/x.ts', text)).toEqual([]);
    expect(
      lint('src/fetch/x.ts', "export { Agent } from 'undici';\nexport * from 'node:dns/promises';\n"),
    ).toEqual([]);
  });

  it('src/tuning/README.md lists every file of src/tuning/', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'src', 'tuning', 'README.md'), 'utf8');
    const missing = sources('src/tuning')
      .map((f) => path.basename(f))
      .filter((name) => !readme.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
