import { Client } from 'pg';
import { tsqueryOf, tsvectorOf, wordsOf } from '../../src/dcache/search-lexemes';
import { createPgDatabase } from '../support/backends';

/**
 * A document's words as sift works them out for PostgreSQL's index: the database reads them as
 * they are, and they meet a query's, whichever words either holds.
 */

describe('words of a document, worked out by sift', () => {
  it('splits on what is not a letter or digit, lower-cases, strips diacritics and stems English', () => {
    expect(
      wordsOf('Running dogs, the café’s 3 CAFÉS; naïve-users e-mail: Ünïcödé 東京都 Ελληνικά 😀x'),
    ).toEqual([
      'run',
      'dog',
      'the',
      'cafe',
      's',
      '3',
      'cafe',
      'naiv',
      'user',
      'e',
      'mail',
      'unicod',
      '東京都',
      'ελληνικα',
      'x',
    ]);
    // A word longer than anyone searches for is left out; the words around it keep their places.
    expect(wordsOf(`before ${'a'.repeat(257)} after`)).toEqual(['befor', 'after']);
    expect(wordsOf(`${'b'.repeat(256)}`)).toHaveLength(1);
    // Marks alone (an emoji's variation selector, a stray accent) are no word.
    expect(wordsOf('love ❤\uFE0F it \u0301 now')).toEqual(['love', 'it', 'now']);
  });

  it('writes title words weighted A, body words B, each with its positions', () => {
    expect(tsvectorOf('Running dogs', 'Dogs run; cats sleep.')).toBe(
      "'run':1A,4B 'dog':2A,3B 'cat':5B 'sleep':6B",
    );
    expect(tsvectorOf('', '')).toBe('');
  });

  it("keeps within PostgreSQL's limits: 256 positions a word, positions up to 16383", () => {
    const v = tsvectorOf('', 'word '.repeat(20_000) + 'last');
    const word = /'word':([^ ]*)/.exec(v)![1].split(',');
    expect(word).toHaveLength(256);
    expect(v).toMatch(/'last':16383B$/);
  });

  it('asks for every word of a query, stemmed the same way', () => {
    expect(tsqueryOf(['Installing', 'the', 'PACKAGES'])).toBe("'instal' & 'the' & 'packag'");
    expect(tsqueryOf(['install', 'installs'])).toBe("'instal'");
    expect(tsqueryOf(['...', '—'])).toBeUndefined();
  });
});

describe('words of a document, read by PostgreSQL', () => {
  let pg: { url: string; drop: () => Promise<void> };
  let c: Client;
  beforeAll(async () => {
    pg = await createPgDatabase();
    c = new Client({ connectionString: pg.url });
    await c.connect();
  });
  afterAll(async () => {
    await c.end();
    await pg.drop();
  });

  /** English words of every kind of ending the stemmer treats. */
  const ENGLISH =
    'generously relational conditional rational valenci hesitanci digitizer conformabli radicalli differentli ' +
    'vileli analogousli vietnamization predication operator feudalism decisiveness hopefulness callousness ' +
    'formaliti sensitiviti sensibiliti triplicate formative formalize electriciti electrical hopeful goodness ' +
    'revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment ' +
    'dependent adoption homologou communism activate angulariti homologous effective bowdlerize probate rate ' +
    'cease controlling rolling skies dying lying tying news innings outing canning howe proceed exceed succeed ' +
    'generate generation generously communal arsenal knives ladies crying agreed feed plastered bled motoring ' +
    'sing conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky';

  it("stems every word as PostgreSQL's 'english' configuration does", async () => {
    const words = ENGLISH.split(' ');
    const r = await c.query<{ w: string; l: string[] | null }>(
      "SELECT w, ts_lexize('english_stem', w) AS l FROM unnest($1::text[]) AS w",
      [words],
    );
    const theirs = r.rows.filter((x) => x.l && x.l.length > 0).map((x) => [x.w, x.l![0]]);
    expect(theirs.length).toBeGreaterThan(80);
    const differ = theirs.filter(([w, l]) => wordsOf(w)[0] !== l).map(([w]) => [w, wordsOf(w)[0]]);
    // One word of Snowball's list of those left as they are is stemmed: a query meets it all the
    // same (it goes through the same steps), only ts_headline's marks miss it.
    expect(differ).toEqual([['howe', 'how']]);
  });

  it('is read as it is written, and matched and ranked by what a query asks', async () => {
    const title = 'Installing on Linux';
    const body = 'Install the package with apt on Debian, then start the daemon. Installs take a minute.';
    const v = tsvectorOf(title, body);
    const r = await c.query<{ v: string; hit: boolean; miss: boolean; rank: number }>(
      'SELECT $1::tsvector::text AS v, $1::tsvector @@ $2::tsquery AS hit, $1::tsvector @@ $3::tsquery AS miss, ts_rank($1::tsvector, $2::tsquery) AS rank',
      [v, tsqueryOf(['installed', 'the', 'packages']), tsqueryOf(['install', 'windows'])],
    );
    expect(r.rows[0].v).toBe(
      "'a':17B 'apt':8B 'daemon':14B 'debian':10B 'instal':1A,4B,15B 'linux':3A 'minut':18B 'on':2A,9B 'packag':6B 'start':12B 'take':16B 'the':5B,13B 'then':11B 'with':7B",
    );
    expect(r.rows[0].hit).toBe(true);
    expect(r.rows[0].miss).toBe(false);
    expect(r.rows[0].rank).toBeGreaterThan(0);
  });

  it('a document of many words is read whole; one past what a tsvector holds, its first megabyte', async () => {
    const length = (v: string) =>
      c.query<{ n: number }>('SELECT length($1::tsvector) AS n', [v]).then((r) => Number(r.rows[0].n));
    const words = (n: number, width: number) =>
      Array.from({ length: n }, (_, i) => `w${String(i).padStart(width, '0')} common`).join(' ');
    expect(await length(tsvectorOf('T', words(40_000, 5)))).toBe(40_002);
    // 120,000 words of 12 bytes, 16 with their one position: 1.9 MB, where PostgreSQL takes 1 MB.
    const n = await length(tsvectorOf('T', words(120_000, 11)));
    expect(n).toBeGreaterThan(60_000);
    expect(n).toBeLessThan(65_536);
  });
});
