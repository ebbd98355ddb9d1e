import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { ensureBuilt, ROOT } from '../support/process';

interface Probe {
  lazy: boolean;
  calls: string[];
  results: boolean[];
  classes: unknown[];
  tokenListMade: boolean;
  markdown: string;
}

/**
 * What a script sees of linkedom, in a process of its own (the module cache a test runner keeps is
 * its own, not Node's), with sift's extraction loaded first or not: whether nodes are built on
 * LazyEventTarget; the order listeners run in for bubbling, `once`, removal,
 * stopImmediatePropagation and preventDefault; the class of elements through every way of
 * changing it; and whether reading the class of an element without one made it a token list.
 */
function probe(loadSiftFirst: boolean): Probe {
  const dist = path.join(ROOT, 'dist', 'src');
  const script = `
    const sift = ${loadSiftFirst} ? require(${JSON.stringify(path.join(dist, 'extract', 'extract.js'))}) : undefined;
    const { parseHTML } = require('linkedom');
    const { LazyEventTarget } = require(${JSON.stringify(path.join(dist, 'tuning', 'linkedom.js'))});
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
    const page = parseHTML('<div class="  a   b a "><p>x</p><span class="c">y</span></div>').document;
    const [box, q, span] = ['div', 'p', 'span'].map((t) => page.querySelector(t));
    const classes = [box.className, box.getAttribute('class'), q.className, q.getAttribute('class'), span.className];
    box.classList.add('d');
    classes.push(box.className);
    box.classList.remove('a');
    classes.push(box.getAttribute('class'), box.classList.contains('b'), box.classList.length);
    span.setAttribute('class', ' e  f ');
    classes.push(span.className, span.classList.contains('e'));
    span.removeAttribute('class');
    classes.push(span.className, span.getAttribute('class'), span.hasAttribute('class'));
    span.className = 'g h';
    classes.push(span.getAttribute('class'), span.classList.contains('h'));
    const fresh = page.createElement('i');
    fresh.getAttribute('class');
    const tokenListMade = Object.getOwnPropertySymbols(fresh).some((s) => s.description === 'classList' && fresh[s]);
    const markdown = sift ? sift.extractHtml('<html><body><article><h1>T</h1><p>' + 'Words of the page. '.repeat(40) + '</p></article></body></html>', 'https://example.com/', 'markdown').content : '';
    console.log(JSON.stringify({ lazy: p instanceof LazyEventTarget && document instanceof LazyEventTarget, calls, results, classes, tokenListMade, markdown }));
  `;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' })) as Probe;
}

describe('linkedom as extraction uses it', () => {
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

  it("reads an element's class from its attribute, as linkedom answers it, without a token list", () => {
    const sift = probe(true);
    const stock = probe(false);
    expect(sift.classes).toEqual(stock.classes);
    expect(sift.classes).toEqual([
      'a b',
      'a b',
      '',
      '',
      'c',
      'a b d',
      'b d',
      true,
      2,
      'e f',
      true,
      '',
      '',
      false,
      'g h',
      true,
    ]);
    expect(stock.tokenListMade).toBe(true);
    expect(sift.tokenListMade).toBe(false);
  });
});
