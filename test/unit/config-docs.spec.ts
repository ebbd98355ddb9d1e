import * as fs from 'node:fs';
import * as path from 'node:path';
import { DOCS_PAGE, docsTable, envExample, withDocsTable } from '../../src/config/config-docs';
import { SCHEMA } from '../../src/config/env.schema';

const ROOT = path.join(__dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const REGENERATE = 'run `npm run config-docs` and commit what it writes';

/** Lines of `a` and `b` that differ, first ten, for a failure that says where. */
function differences(committed: string, generated: string): string[] {
  const a = committed.split('\n');
  const b = generated.split('\n');
  const out: string[] = [];
  for (let i = 0; i < Math.max(a.length, b.length) && out.length < 10; i++) {
    if (a[i] !== b[i])
      out.push(`line ${i + 1}: committed ${JSON.stringify(a[i])}, schema ${JSON.stringify(b[i])}`);
  }
  return out;
}

describe('the docs of the configuration are generated from its schema', () => {
  it('.env.example is what the schema makes: every variable, by section, in order, with its default', () => {
    const committed = read('.env.example');
    expect({ differences: differences(committed, envExample()), fix: REGENERATE }).toEqual({
      differences: [],
      fix: REGENERATE,
    });
  });

  it("docs/configuration.md's table is what the schema makes", () => {
    const committed = read(DOCS_PAGE);
    expect({ differences: differences(committed, withDocsTable(committed)), fix: REGENERATE }).toEqual({
      differences: [],
      fix: REGENERATE,
    });
  });

  it('both list every variable of the schema once, in the same order', () => {
    const names = Object.values(SCHEMA).flatMap((s) => Object.values(s).map((k) => k.env));
    const inEnv = [...read('.env.example').matchAll(/^(?:# )?([A-Z][A-Z_0-9]*)=/gm)].map((m) => m[1]);
    const inTable = [...docsTable().matchAll(/^\|[^|]*\| `([A-Z_0-9]+)` \|/gm)].map((m) => m[1]);
    expect(inEnv).toEqual(names);
    expect(inTable).toEqual(names);
    expect(new Set(names).size).toBe(names.length);
  });

  it('a page without the markers is an error, not a silently unchanged file', () => {
    expect(() => withDocsTable('# no table here\n')).toThrow(/docs\/configuration\.md has no/);
  });
});
