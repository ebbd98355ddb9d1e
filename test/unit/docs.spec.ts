import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The README is a guide and docs/ the reference (SPEC): the guide stays short, every relative link
 * of either leads to a file that exists, and every page of docs/ is reachable from the README.
 */
const ROOT = path.join(__dirname, '..', '..');
const README = 'README.md';
const docsPages = () =>
  fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The relative link targets of a markdown file, without their #anchor, outside code. */
function relativeLinks(file: string): string[] {
  const prose = read(file)
    .replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '')
    .replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
    .map((target) => target.replace(/#.*$/, ''));
}

/** `target` as a path from the project's root, read from `file`'s folder. */
const fromRoot = (file: string, target: string) =>
  path.relative(ROOT, path.resolve(ROOT, path.dirname(file), decodeURI(target)));

describe('the README and docs/', () => {
  it('the README is at most 300 lines', () => {
    expect(read(README).split('\n').length - 1).toBeLessThanOrEqual(300);
  });

  it('every relative link of the README and of docs/ leads to a file that exists', () => {
    const broken = [README, ...docsPages()].flatMap((file) =>
      relativeLinks(file)
        .filter((target) => !fs.existsSync(path.join(ROOT, fromRoot(file, target))))
        .map((target) => `${file}: ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it('every page of docs/ is linked from the README', () => {
    const linked = new Set(relativeLinks(README).map((target) => fromRoot(README, target)));
    const pages = docsPages();
    expect(pages.length).toBeGreaterThan(0);
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
  });
});
