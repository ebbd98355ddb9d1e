import { canonicalUrl, isTrackingParam } from '../../src/crawl/canonical';
import { MAX_URL_LENGTH } from '../../src/common/urls';

describe('canonicalUrl: one form per page a crawl keeps once', () => {
  it.each([
    ['HTTP://Example.COM/Docs', 'http://example.com/Docs'],
    ['http://example.com:80/a', 'http://example.com/a'],
    ['https://example.com:443/a', 'https://example.com/a'],
    ['https://example.com:8443/a', 'https://example.com:8443/a'],
    ['http://example.com:443/a', 'http://example.com:443/a'],
    ['https://example.com', 'https://example.com/'],
    ['https://example.com/', 'https://example.com/'],
    ['https://example.com/docs/', 'https://example.com/docs'],
    ['https://example.com/docs//', 'https://example.com/docs/'],
    ['https://example.com/docs/?a=1', 'https://example.com/docs?a=1'],
    ['https://example.com/a#section', 'https://example.com/a'],
    ['https://example.com/#top', 'https://example.com/'],
    ['https://user:pw@example.com/a', 'https://example.com/a'],
    ['https://example.com/a%2fb%c3%a9', 'https://example.com/a%2Fb%C3%A9'],
    ['https://example.com/a?q=%2fx', 'https://example.com/a?q=%2Fx'],
  ])('%s → %s', (raw, canonical) => {
    expect(canonicalUrl(raw)).toBe(canonical);
  });

  it('drops tracking parameters in any case, keeps the others as written and in order', () => {
    expect(canonicalUrl('https://e.test/p?b=2&utm_source=x&a=1&UTM_Medium=y&gclid=z&fbclid=w')).toBe(
      'https://e.test/p?b=2&a=1',
    );
    expect(canonicalUrl('https://e.test/p?mc_cid=1&mc_eid=2&msclkid=3&dclid=4&yclid=5&_ga=6&GCLID=7')).toBe(
      'https://e.test/p',
    );
    expect(canonicalUrl('https://e.test/p?utm_source=x')).toBe('https://e.test/p');
    expect(canonicalUrl('https://e.test/p?')).toBe('https://e.test/p');
    expect(canonicalUrl('https://e.test/p?a=b%20c&&d=+e&flag')).toBe('https://e.test/p?a=b%20c&d=+e&flag');
    // A name escaped is the name a server reads.
    expect(canonicalUrl('https://e.test/p?utm%5Fsource=x&x=1')).toBe('https://e.test/p?x=1');
    // Parameters that only look alike stay.
    expect(canonicalUrl('https://e.test/p?utm=1&xutm_a=2&gclidx=3')).toBe(
      'https://e.test/p?utm=1&xutm_a=2&gclidx=3',
    );
  });

  it('drops the whole query with ignoreQuery', () => {
    expect(canonicalUrl('https://e.test/p/?page=2&sort=a#x', { ignoreQuery: true })).toBe('https://e.test/p');
    expect(canonicalUrl(new URL('https://e.test/?page=2'), { ignoreQuery: true })).toBe('https://e.test/');
  });

  it('the same page written differently has one canonical form', () => {
    const forms = [
      'https://Docs.Example.com:443/guide/?utm_campaign=z#intro',
      'https://docs.example.com/guide',
      'https://docs.example.com/guide/',
      'HTTPS://DOCS.EXAMPLE.COM/guide?fbclid=abc',
    ];
    expect(new Set(forms.map((f) => canonicalUrl(f))).size).toBe(1);
  });

  it('is undefined for anything but an absolute http(s) URL within the length cap', () => {
    for (const raw of [
      '',
      '/relative',
      'example.com/a',
      'ftp://e.test/a',
      'mailto:a@e.test',
      'javascript:x',
      'http://',
      'https://exa mple.com/',
    ])
      expect(canonicalUrl(raw)).toBeUndefined();
    const base = 'https://e.test/';
    expect(canonicalUrl(base + 'a'.repeat(MAX_URL_LENGTH - base.length))).toBeDefined();
    expect(canonicalUrl(base + 'a'.repeat(MAX_URL_LENGTH - base.length + 1))).toBeUndefined();
    // Escaping by the parser may lengthen a URL past the cap.
    expect(canonicalUrl(base + ' '.repeat(MAX_URL_LENGTH - base.length - 1) + 'a')).toBeUndefined();
  });

  it('isTrackingParam', () => {
    expect(
      ['utm_source', 'UTM_TERM', 'utm_', 'gclid', 'FbClid', '_ga', 'msclkid'].every(isTrackingParam),
    ).toBe(true);
    expect(['utm', 'ga', 'q', 'page', 'gclid_', 'id'].some(isTrackingParam)).toBe(false);
  });
});
