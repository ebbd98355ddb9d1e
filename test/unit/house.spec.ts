import * as fs from 'node:fs';
import * as path from 'node:path';
import { Linter } from 'eslint';
import * as tseslint from 'typescript-eslint';

/**
 * The house's rules (SPEC "The house"): imports flow down the layers, only src/tuning/ reaches
 * into a library's private files (and its README lists every file there), no source file is over
 * 300 lines. `make lint` runs the same rules; this suite makes CI fail on them too. And the tests
 * read as rules: no spec file is named for an issue or a finding, no test sleeps a fixed time.
 */
const ROOT = path.join(__dirname, '..', '..');
const sources = (dir: string): string[] =>
  fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));

/** Every file of the test tree that holds code (.ts, .js), as a path from the root; installed clients' aside. */
const testFiles = (): string[] =>
  fs
    .readdirSync(path.join(ROOT, 'test'), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name) && !e.parentPath.includes('node_modules'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));

/** A spec file named for an issue or a finding (its word, or a number) instead of its subsystem. */
const namedForAnIssue = (file: string) =>
  /\.spec\.ts$/.test(file) && /issue|finding|(^|[-_.])\d+\.spec\.ts$/i.test(path.basename(file));

/**
 * The fixed sleeps: a promise that a timer resolves (setTimeout given the promise's resolve, or a
 * function that only calls it), a sleep or delay function awaited, timers/promises. A test waits
 * for what it needs with waitUntil; a time that is what the test is about goes through
 * idle(ms, why). Both live in test/support/wait.ts, the one file allowed a timer's promise.
 */
const FIXED_SLEEPS = [
  /new Promise\s*(<[^>]*>)?\s*\(\s*\(?\s*(\w+)\s*\)?\s*=>\s*\{?\s*setTimeout\(\s*(\2|\(\)\s*=>\s*\2\(\))\s*,/,
  /\bawait\s+(sleep|delay|pause)\s*\(/,
  /['"](node:)?timers\/promises['"]/,
];
const WAIT_HELPERS = path.join('test', 'support', 'wait.ts');
const sleepsIn = (text: string): string[] =>
  FIXED_SLEEPS.flatMap((re) => [...text.matchAll(new RegExp(re.source, 'g'))].map((m) => m[0]));

/** Members by an underscored name (a library's private, by convention) and Node's require hooks. */
const PRIVATE_MEMBERS = /\._[A-Za-z]\w*|\brequire\.extensions\b/g;
const privatesIn = (text: string): string[] => [...text.matchAll(PRIVATE_MEMBERS)].map((m) => m[0]);

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

  it("a library's private member (an _underscored name, require.extensions) is reached from src/tuning/ only", () => {
    const reaching = sources('src')
      .filter((f) => !f.startsWith(path.join('src', 'tuning')))
      .flatMap((f) => privatesIn(fs.readFileSync(path.join(ROOT, f), 'utf8')).map((m) => `${f}: ${m}`));
    expect(reaching).toEqual([]);
    // '§' keeps this file's own text from matching; it is taken out before the check.
    const planted = (text: string) => privatesIn(text.replace(/§/g, ''));
    expect(planted('rules._§headerDuplicatesTitle(h)')).toEqual(['._headerDuplicatesTitle']);
    expect(planted("require.ext§ensions['.ts'] = load;")).toEqual(['require.extensions']);
    expect(planted('const n = row.count_total + this.x;')).toEqual([]);
  });

  it('no spec file is named for an issue or a finding', () => {
    expect(testFiles().filter(namedForAnIssue)).toEqual([]);
  });

  it('a spec file named for an issue or a finding fails, one named for its subsystem passes', () => {
    const names = ['test/e2e/issue-50.spec.ts', 'test/e2e/finding13.spec.ts', 'test/e2e/fetch-49.spec.ts'];
    expect(names.filter(namedForAnIssue)).toEqual(names);
    const fine = ['test/e2e/crash-random.spec.ts', 'test/unit/house.spec.ts', 'test/support/node24.ts'];
    expect(fine.filter(namedForAnIssue)).toEqual([]);
  });

  it('no test sleeps a fixed time', () => {
    const sleeping = testFiles()
      .filter((f) => f !== WAIT_HELPERS)
      .flatMap((f) => sleepsIn(fs.readFileSync(path.join(ROOT, f), 'utf8')).map((m) => `${f}: ${m}`));
    expect(sleeping).toEqual([]);
  });

  it('a fixed sleep fails, a wait for a condition or a named idle passes', () => {
    // '§' keeps this file's own text from matching; it is taken out before the check.
    const planted = (text: string) => sleepsIn(text.replace(/§/g, ''));
    for (const text of [
      'await new Promise((r) => set§Timeout(r, 200));',
      'await new Promise((resolve) =>\n  set§Timeout(resolve, 2500));',
      'await new Promise<void>((ok) => set§Timeout(() => ok(), 100));',
      'while (n < 2) await new Promise((ok) => { set§Timeout(ok, 50); });',
      'await sl§eep(50);',
      "import { setTimeout } from 'node:timers/pro§mises';",
    ])
      expect([text, planted(text)]).toEqual([text, [expect.any(String)]]);
    for (const text of [
      "await idle(2500, 'a window in which a late fetch would show');",
      "await waitUntil(() => (held.length >= 2 ? true : undefined), 'two held');",
      "'/later': (req, res) => setTimeout(() => send(200, 'text/plain', 'in time')(req, res), 300),",
      'const timer = setTimeout(() => reject(new Error(`no answer head`)), 5000);',
    ])
      expect([text, planted(text)]).toEqual([text, []]);
  });

  it('src/tuning/README.md lists every file of src/tuning/', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'src', 'tuning', 'README.md'), 'utf8');
    const missing = sources('src/tuning')
      .map((f) => path.basename(f))
      .filter((name) => !readme.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
