import { pageMetaOf } from '../../src/pages/page-types';

describe('a page cached by an earlier version', () => {
  const base = {
    url: 'https://a.test/',
    final_url: 'https://a.test/',
    status: 200,
    content_type: 'text/html',
    title: 't',
    truncated: false,
  };
  const markdown = { text: '# t', digest: 'd', truncated: false };

  it('keeps the formats it stored under their old name', () => {
    const meta = pageMetaOf({ ...base, kind: 'html', rendered: { markdown } });
    expect(meta.formats).toEqual({ markdown });
    expect(meta).not.toHaveProperty('rendered');
  });

  it('reads a page stored now as it is, the same object each time', () => {
    const stored = { ...base, kind: 'html', formats: { markdown } };
    expect(pageMetaOf(stored)).toBe(stored);
    const old = { ...base, kind: 'html', rendered: { markdown } };
    expect(pageMetaOf(old)).toBe(pageMetaOf(old));
    expect(pageMetaOf({ ...base, kind: 'text' })).toEqual({ ...base, kind: 'text' });
  });
});
