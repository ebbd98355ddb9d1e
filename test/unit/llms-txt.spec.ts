import { LLMS_TXT_MAX_LINKS, isLlmsTxt, llmsTxtLinks } from '../../src/crawl/llms-txt';
import { llmsFullPage, llmsLine, llmsSiteOf, llmsTxt, sectionOf } from '../../src/crawl/llms-files';

/** Reading a site's llms.txt, and writing one. */

const BASE = 'https://docs.example.com/llms.txt';

describe('llmsTxtLinks', () => {
  it('takes every http(s) link once, absolute, without its fragment, in file order', () => {
    const text = [
      '# Example',
      '> A summary with [an inline link](/inline).',
      '## Docs',
      '- [Start](/start): where to begin',
      '- [Guide](guide/intro.md "the guide")',
      '- [Angle](<https://docs.example.com/a b>)',
      '- [Again](https://docs.example.com/start#top)',
      '- [Other](https://other.example.org/x): another site',
      '- [Mail](mailto:a@example.com)',
      '- [Script](javascript:alert(1))',
      '- [Broken](http://[::1)',
      '- not a link: [text] (/nope)',
    ].join('\n');
    expect(llmsTxtLinks(text, BASE)).toEqual([
      { url: 'https://docs.example.com/inline', title: 'an inline link' },
      { url: 'https://docs.example.com/start', title: 'Start' },
      { url: 'https://docs.example.com/guide/intro.md', title: 'Guide' },
      { url: 'https://other.example.org/x', title: 'Other' },
    ]);
  });

  it('leaves out a link whose URL is over 2,048 characters, made absolute', () => {
    const long = `/${'a'.repeat(2100)}`;
    const deep = `https://docs.example.com/${'d/'.repeat(1010)}llms.txt`;
    expect(llmsTxtLinks(`[long](${long}) [ok](/ok)`, BASE)).toEqual([
      { url: 'https://docs.example.com/ok', title: 'ok' },
    ]);
    // Short as written, long against where the file was read.
    expect(llmsTxtLinks('[rel](more/than/that/page)', deep)).toEqual([]);
  });

  it('keeps at most LLMS_TXT_MAX_LINKS', () => {
    const text = Array.from({ length: LLMS_TXT_MAX_LINKS + 50 }, (_, i) => `- [p${i}](/p/${i})`).join('\n');
    const links = llmsTxtLinks(text, BASE);
    expect(links).toHaveLength(LLMS_TXT_MAX_LINKS);
    expect(links[LLMS_TXT_MAX_LINKS - 1].url).toBe(`https://docs.example.com/p/${LLMS_TXT_MAX_LINKS - 1}`);
  });

  it('reads a hostile megabyte in one pass: brackets and parens that never close', () => {
    for (const unit of ['[', '](', '[a](', '[a](b', '[' + 'x'.repeat(999), '](' + 'y'.repeat(4000)]) {
      const text = unit.repeat(Math.ceil(1_000_000 / unit.length));
      expect(llmsTxtLinks(text, BASE)).toEqual([]);
    }
    // Links still found between the noise.
    const mixed = `${'['.repeat(100_000)}[ok](/ok)${'('.repeat(100_000)}`;
    expect(llmsTxtLinks(mixed, BASE)).toEqual([{ url: 'https://docs.example.com/ok', title: 'ok' }]);
  });
});

describe('isLlmsTxt', () => {
  it('a 200 text file; never a web page a site answers every path with, nor an error', () => {
    expect(isLlmsTxt(200, 'text/plain; charset=utf-8')).toBe(true);
    expect(isLlmsTxt(200, 'text/markdown')).toBe(true);
    expect(isLlmsTxt(200, '')).toBe(true);
    expect(isLlmsTxt(200, 'text/html; charset=utf-8')).toBe(false);
    expect(isLlmsTxt(200, 'application/xhtml+xml')).toBe(false);
    expect(isLlmsTxt(200, 'application/json')).toBe(false);
    expect(isLlmsTxt(200, 'image/png')).toBe(false);
    expect(isLlmsTxt(404, 'text/plain')).toBe(false);
  });
});

describe('the files', () => {
  const site = llmsSiteOf('https://docs.example.com/', {
    url: 'https://docs.example.com/',
    title: ' Example\n Docs ',
    description: 'Everything about Example.',
    markdown: '',
  });

  it('a section per folder; the root under Pages; another host under its name', () => {
    expect(sectionOf('https://docs.example.com/', site.host)).toBe('Pages');
    expect(sectionOf('https://docs.example.com/about', site.host)).toBe('Pages');
    expect(sectionOf('https://docs.example.com/api-reference/v1/x', site.host)).toBe('Api reference');
    expect(sectionOf('https://docs.example.com/%C3%A9t%C3%A9/x', site.host)).toBe('Été');
    expect(sectionOf('https://www.docs.example.com/guide/x', site.host)).toBe('Guide');
    expect(sectionOf('https://blog.example.com/post/1', site.host)).toBe('blog.example.com');
  });

  it("a page's line escapes what would end its link early and keeps its description short", () => {
    const line = llmsLine({
      url: 'https://docs.example.com/a (b)',
      title: 'Arrays [and] slices\\',
      description: `${'word '.repeat(100)}end`,
      markdown: '',
    });
    expect(
      line.startsWith('- [Arrays \\[and\\] slices\\\\](https://docs.example.com/a%20%28b%29): word'),
    ).toBe(true);
    expect(line.length).toBeLessThan(400);
    expect(line.endsWith('…')).toBe(true);
    // A description without spaces is cut between characters, never inside one.
    const emoji = llmsLine({
      url: 'https://x.test/',
      title: 't',
      description: 'a' + '😀'.repeat(200),
      markdown: '',
    });
    expect(emoji).not.toMatch(/[\uD800-\uDBFF]…$/);
    expect(emoji.endsWith('😀…')).toBe(true);
    expect(llmsLine({ url: 'https://x.test/', title: '', description: '', markdown: '' })).toBe(
      '- [https://x.test/](https://x.test/)',
    );
  });

  it("llms.txt: the site's title and summary, then its sections in the order of their first page", () => {
    const page = (path: string, title: string) => ({
      url: `https://docs.example.com${path}`,
      title,
      description: `About ${title}.`,
      markdown: '',
    });
    const text = llmsTxt(site, [
      page('/', 'Home'),
      page('/guide/start', 'Start'),
      page('/api/users', 'Users'),
      page('/guide/deploy', 'Deploy'),
    ]);
    expect(text).toBe(
      [
        '# Example Docs',
        '',
        '> Everything about Example.',
        '',
        '## Pages',
        '',
        '- [Home](https://docs.example.com/): About Home.',
        '',
        '## Guide',
        '',
        '- [Start](https://docs.example.com/guide/start): About Start.',
        '- [Deploy](https://docs.example.com/guide/deploy): About Deploy.',
        '',
        '## Api',
        '',
        '- [Users](https://docs.example.com/api/users): About Users.',
        '',
      ].join('\n'),
    );
    // A site whose seed was not read is named by its host.
    expect(llmsTxt(llmsSiteOf('https://docs.example.com/x'), [])).toBe(
      '# docs.example.com\n\n> The pages of docs.example.com.\n',
    );
  });

  it("llms-full.txt: a page's title once, its URL, its markdown", () => {
    const p = {
      url: 'https://docs.example.com/guide/start',
      title: 'Start',
      description: '',
      markdown: '\n# Start\n\nRun it.\n\n## Then\n\nStop it.\n\n',
    };
    expect(llmsFullPage(p)).toBe(
      '\n# Start\n\nSource: https://docs.example.com/guide/start\n\nRun it.\n\n## Then\n\nStop it.\n',
    );
    expect(llmsFullPage({ ...p, markdown: '# Other\n\nText.' })).toBe(
      '\n# Start\n\nSource: https://docs.example.com/guide/start\n\n# Other\n\nText.\n',
    );
  });
});
