import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { ensureBuilt, ROOT } from '../support/process';

/**
 * What a script sees of linkedom's events, in a process of its own (the module cache a test runner
 * keeps is its own, not Node's): whether nodes are built on sift's LazyEventTarget, and the order
 * listeners run in for bubbling, `once`, removal, stopImmediatePropagation and preventDefault.
 */
function probe(loadSiftFirst: boolean): {
  lazy: boolean;
  calls: string[];
  results: boolean[];
  markdown: string;
} {
  const dist = path.join(ROOT, 'dist', 'src', 'fetch');
  const script = `
    const sift = ${loadSiftFirst} ? require(${JSON.stringify(path.join(dist, 'extract.js'))}) : undefined;
    const { parseHTML } = require('linkedom');
    const { LazyEventTarget } = require(${JSON.stringify(path.join(dist, 'dom-events.js'))});
    const { document, Event } = parseHTML('<html><body><div id="d"><p id="p">text</p></div></body></html>');
    const div = document.getElementById('d'), p = document.getElementById('p');
    const calls = [], results = [];
    const log = (name) => (e) => calls.push(name + ':' + e.type + ':' + e.eventPhase);
    div.addEventListener('a', log('div'));
    p.addEventListener('a', log('p-once'), { once: true });
    p.addEventListener('a', { handleEvent: log('p-object') });
    results.push(p.dispatchEvent(new Event('a', { bubbles: true })));
    results.push(p.dispatchEvent(new Event('a', { bubbles: true })));
    results.push(p.dispatchEvent(new Event('a')));
    const gone = log('gone');
    p.addEventListener('b', gone);
    p.removeEventListener('b', gone);
    p.addEventListener('b', (e) => { calls.push('stopper'); e.preventDefault(); e.stopImmediatePropagation(); });
    p.addEventListener('b', log('after-stop'));
    results.push(p.dispatchEvent(new Event('b', { cancelable: true })));
    results.push(document.createTextNode('t').dispatchEvent(new Event('c')));
    const markdown = sift ? sift.extractHtml('<html><body><article><h1>T</h1><p>' + 'Words of the page. '.repeat(40) + '</p></article></body></html>', 'https://example.com/', 'markdown').content : '';
    console.log(JSON.stringify({ lazy: p instanceof LazyEventTarget && document instanceof LazyEventTarget, calls, results, markdown }));
  `;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' })) as {
    lazy: boolean;
    calls: string[];
    results: boolean[];
    markdown: string;
  };
}

describe('linkedom nodes without a listener map each', () => {
  beforeAll(() => ensureBuilt(), 120_000);

  it('builds every node on LazyEventTarget once sift loaded linkedom, with the events linkedom gives', () => {
    const sift = probe(true);
    const stock = probe(false);
    expect(sift.lazy).toBe(true);
    expect(stock.lazy).toBe(false);
    expect(sift.calls).toEqual(stock.calls);
    expect(sift.results).toEqual(stock.results);
    expect(sift.calls).toEqual([
      'p-once:a:2',
      'p-object:a:2',
      'div:a:3',
      'p-object:a:2',
      'div:a:3',
      'p-object:a:2',
      'stopper',
    ]);
    expect(sift.results).toEqual([true, true, true, false, true]);
    expect(sift.markdown).toContain('Words of the page.');
  });
});
