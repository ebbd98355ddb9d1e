import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { ensureBuilt } from '../support/process';

/**
 * Counts of pieces are kept between texts: a kept piece must not keep the text it was read from.
 * Run in a node of its own, which can collect its garbage when asked.
 */
const SCRIPT = `
const { countTokens } = require(process.argv[1]);
const body = Array.from({ length: 130 }, (_, k) => 'Paragraph ' + k + '. Sift turns pages like this one into clean markdown.').join('\\n\\n');
countTokens(body);
gc(); gc();
const before = process.memoryUsage().heapUsed;
// Each page has a word of its own, longer than the shortest slice that points into its text.
for (let i = 0; i < 3000; i++) countTokens('unusualpiecexyz' + i.toString(36) + 'q ' + body + ' ' + i);
gc(); gc();
process.stdout.write(String(process.memoryUsage().heapUsed - before));
`;

describe('token counts keep no text they counted', () => {
  it('3,000 pages of 7 KB, each with a new word, leave under 2 MB behind', () => {
    const tokens = path.join(path.dirname(ensureBuilt()), 'common', 'tokens.js');
    const grown = Number(
      execFileSync(process.execPath, ['--expose-gc', '-e', SCRIPT, tokens], { encoding: 'utf8' }),
    );
    // Each page kept would be 7 KB: 21 MB in all.
    expect(grown).toBeLessThan(2 * 1024 * 1024);
  });
});
