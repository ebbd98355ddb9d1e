import { parseHTML } from 'linkedom';
import { ALL_RULES } from '../../src/extract/rules';
import { extractHtml } from '../../src/extract/extract';
import { itemRun } from '../../src/extract/item-runs';

/** Without the run (and the page's <main>, which would stand in too: rule mainBlock). */
const withoutRuns = { rules: { ...ALL_RULES, itemRuns: false, mainBlock: false } };

const page = (title: string, main: string, rest = '') =>
  `<html><head><title>${title}</title></head><body><header><a href="/">Home</a> <a href="/about">About</a></header>` +
  `<main>${main}</main>${rest}<footer><p>© The site. All rights reserved. Terms and privacy.</p></footer></body></html>`;

const LEAD = [
  'The council voted on Tuesday to rebuild the old bridge over the river, ending a debate that has run for eleven years and through three elections.',
  'Work starts in the spring and should take two years; the ferry that replaced the bridge will run until the new one opens, at the same fares as today.',
  'Residents on both banks said the vote came late but was welcome, and the shops near the old landing hope the traffic will come back with the bridge.',
];
const STORIES = Array.from({ length: 40 }, (_, i) => ({
  headline: `${['Chips slow', 'New app rules', 'A cold planet', 'Cars recalled', 'Faster engines'][i % 5]}: no. ${i + 1}`,
  line: `${i + 2}h ago`,
}));

/** A site's front page: its lead story at length, then a list of stories, each a headline (a link) and its age. */
function frontPage(): string {
  const lead = `<article class="story"><h2><a href="/story/lead">Council votes to rebuild the bridge</a></h2><div class="excerpt">${LEAD.map((p) => `<p>${p}</p>`).join('')}</div></article>`;
  const items = STORIES.map(
    (st, i) =>
      `<article class="story"><h2><a href="/story/${i}">${st.headline}</a></h2><div class="excerpt"><p class="age">${st.line}</p></div></article>`,
  ).join('');
  return page('Tech news', `<h1>Latest news</h1><div class="stories">${lead}${items}</div>`);
}

const JOBS = Array.from({ length: 12 }, (_, i) => ({
  title: ['Senior Backend Engineer', 'Full-Stack Developer', 'Staff Platform Engineer', 'Frontend Engineer'][
    i % 4
  ],
  company: `Company ${String.fromCharCode(65 + i)} Labs`,
  place: ['Anywhere in the World', 'Europe only', 'Americas', 'Remote, UTC±3'][i % 4],
  pay: ['$100,000 or more USD', '$50,000 - $74,999 USD', '$75,000 - $99,999 USD'][i % 3],
}));

/** A board of jobs: a table of rows, each a title, a company, a place and a salary. */
function jobsPage(): string {
  const rows = JOBS.map(
    (j, i) =>
      `<tr class="job"><td><a href="/jobs/${i}">${j.title}</a></td><td>${j.company}</td><td>${j.place}</td><td>${j.pay}</td></tr>`,
  ).join('');
  return page(
    'Remote full-stack jobs',
    `<h1>Remote full-stack jobs</h1><p>Latest post 1 day ago.</p><table><tbody>${rows}</tbody></table>`,
  );
}

const PRODUCTS = Array.from({ length: 16 }, (_, i) => ({
  name: `${['Oak', 'Walnut', 'Birch', 'Maple'][i % 4]} ${['bookcase', 'shelf unit', 'wall shelf', 'ladder shelf'][Math.floor(i / 4)]}`,
  price: `$${49 + i * 10}.99`,
  note: ['Free delivery', 'In stock', 'Only 3 left', 'Ships in 2 weeks'][i % 4],
}));

/** A shop's grid of products, each a card with its name (a link), its price and a note. */
function gridPage(): string {
  const cards = PRODUCTS.map(
    (p, i) =>
      `<div class="product-card card-${i}"><h3 class="product-card__name"><a href="/p/${i}">${p.name}</a></h3><span class="price">${p.price}</span><p class="note">${p.note}</p></div>`,
  ).join('');
  return page(
    'Bookcases and shelving units',
    `<h1>Bookcases and shelving units</h1><p>Sort by: price. Page 1 of 2.</p><div class="product-grid">${cards}</div>`,
  );
}

describe('a page of items (rule itemRuns)', () => {
  it('a front page keeps its list of stories, not only the lead story told at length', () => {
    const html = frontPage();
    const text = extractHtml(html, 'https://news.example/', 'text').content;
    for (const p of LEAD) expect(text).toContain(p);
    for (const st of STORIES) expect(text).toContain(st.headline);
    expect(text).not.toContain('All rights reserved');
    const without = extractHtml(html, 'https://news.example/', 'text', withoutRuns).content;
    expect(without).toContain(LEAD[2]);
    expect(STORIES.filter((st) => !without.includes(st.headline)).length).toBeGreaterThan(30);
  });

  it("a board's table of jobs keeps every row", () => {
    const html = jobsPage();
    const text = extractHtml(html, 'https://jobs.example/full-stack', 'text').content;
    for (const j of JOBS) expect(text).toContain(j.company);
    expect(text).toContain('$100,000 or more USD');
    const without = extractHtml(html, 'https://jobs.example/full-stack', 'text', withoutRuns).content;
    expect(JOBS.filter((j) => !without.includes(j.company)).length).toBeGreaterThan(6);
  });

  it("a shop's grid of products keeps each card's name, price and note, not only the sort line", () => {
    const html = gridPage();
    const text = extractHtml(html, 'https://shop.example/bookcases', 'text').content;
    for (const p of PRODUCTS) expect(text).toContain(`${p.name}`);
    for (const p of PRODUCTS) expect(text).toContain(p.price);
    const without = extractHtml(html, 'https://shop.example/bookcases', 'text', withoutRuns).content;
    expect(PRODUCTS.filter((p) => !without.includes(p.price)).length).toBeGreaterThan(8);
  });

  it('an article longer than the list beside it stays the article', () => {
    const paragraphs = Array.from(
      { length: 14 },
      (_, i) =>
        `Paragraph ${i + 1} of the report says what the council decided about the bridge, the budget and the schedule, and why the vote was close this time.`,
    );
    const related = Array.from(
      { length: 8 },
      (_, i) => `<li><a href="/news/${i}">Other story number ${i}</a></li>`,
    );
    const html = page(
      'Council approves the bridge',
      `<article><h1>Council approves the bridge</h1>${paragraphs.map((p) => `<p>${p}</p>`).join('')}</article><div class="more"><ul>${related.join('')}</ul></div>`,
    );
    const text = extractHtml(html, 'https://news.example/bridge', 'text').content;
    for (const p of paragraphs) expect(text).toContain(p);
    expect(text).not.toContain('Other story number');
  });

  it('an article in its <article> stays the article beside a longer slider of teaser links below it', () => {
    const story = [
      'The veteran forward told the national coach on Monday that he will not play for the national side again, ending a career of 129 caps and 48 goals.',
      'He said the decision had been a hard one and that he wanted more time for his family, thanking the supporters who followed the team through three tournaments.',
      'The coach called him one of the great characters of the dressing room and said a farewell match would be held in the spring, against a side still to be chosen.',
      'Only two players have worn the shirt more often, and none of the squad that won the last title is still playing for the national side today.',
    ];
    const teasers = Array.from(
      { length: 20 },
      (_, i) =>
        `<div class="material"><a href="/analysis/${i}"><img src="/i/${i}.jpg" alt=""><div class="text"><h3>Analysis</h3>` +
        `<p class="intro"><span class="date">${i + 1} September</span>Round ${i + 1} in review: the leaders drop points away, the champions climb back and a young keeper saves two penalties</p></div></a></div>`,
    ).join('');
    const html =
      `<html><head><title>Forward ends his international career</title></head><body><header><a href="/">Home</a></header>` +
      `<article class="story"><h1>Forward ends his international career</h1>${story.map((p) => `<p>${p}</p>`).join('')}</article>` +
      `<article class="more-materials"><h3>Analysis and interviews</h3><div class="slider">${teasers}</div></article></body></html>`;
    const text = extractHtml(html, 'https://sport.example/forward', 'text').content;
    for (const p of story) expect(text).toContain(p);
    expect(text).not.toContain('Round 7 in review');
    // The same teasers under a heading of their own, the page's: a page of items.
    const list = html.replace(/<article class="story">.*?<\/article>/, '<h1>Analysis and interviews</h1>');
    expect(extractHtml(list, 'https://sport.example/analysis', 'text').content).toContain(
      'Round 7 in review',
    );
  });

  it('an index of categories by letter, each group named by its letter, is read whole', () => {
    const names = [
      'Adapters',
      'Anchors',
      'Bands',
      'Bolts',
      'Braces',
      'Caps',
      'Clamps',
      'Clips',
      'Dowels',
      'Ends',
    ];
    const groups = ['A', 'B', 'C', 'D', 'E']
      .map((letter) => {
        const links = Array.from({ length: 6 }, (_, i) => {
          const name = `${names.find((n) => n.startsWith(letter))} type ${i + 1}`;
          return `<a href="/c/${letter}${i}">${name}</a>`;
        }).join(' ');
        return `<div class="index-group ${letter}"><div class="letter">${letter}</div><div class="links">${links}</div></div>`;
      })
      .join('');
    const html = page(
      'Fasteners and hardware',
      `<div class="title"><h1>Catalog collection</h1>Find item details, spec sheets and CAD models.</div><div class="browse"><h2>Fasteners and hardware categories</h2>${groups}</div>`,
    );
    const text = extractHtml(html, 'https://catalog.example/fasteners/', 'text').content;
    for (const name of ['Adapters type 1', 'Bands type 6', 'Dowels type 3', 'Ends type 6'])
      expect(text).toContain(name);
  });

  it('finds the run by shape: items of one shape, an own id in a class aside; fewer than four is no run', () => {
    const { document } = parseHTML(
      '<html><body><div id="side"><ul><li>one two</li><li>three four</li></ul></div>' +
        '<div id="main"><div class="post post-11"><p>a b c d e</p></div><div class="post post-12"><p>f g h</p></div>' +
        '<div class="post post-13"><p>i j k l</p></div><div class="post post-14"><p>m n</p></div></div></body></html>',
    );
    const run = itemRun(document.body as unknown as Element)!;
    expect((run.block as unknown as HTMLElement).id).toBe('main');
    expect(run.words).toBe(14);
    expect(run.itemWords).toBe(14);
    const three = parseHTML('<html><body><ul><li>a</li><li>b</li><li>c</li></ul></body></html>').document;
    expect(itemRun(three.body as unknown as Element)).toBeUndefined();
  });

  it('one form around the whole page (its header and heading too) is the page, not a form on it', () => {
    const posts = Array.from(
      { length: 6 },
      (_, i) => `<div class="post"><p>post ${i} says a b c</p></div>`,
    ).join('');
    const wrapped = (form: string) =>
      parseHTML(`<html><body>${form.replace('POSTS', `<div id="posts">${posts}</div>`)}</body></html>`)
        .document.body as unknown as Element;
    const whole = itemRun(
      wrapped('<form method="post" id="aspnetForm"><header>Site</header><h1>Posts</h1>POSTS</form>'),
    );
    expect([(whole?.block as unknown as HTMLElement)?.id, whole?.itemWords]).toEqual(['posts', 36]);
    // The page less its furniture, in every format: the form's content, not the form.
    // Cards that are links, which Readability cleans away: the page less its furniture stands in.
    const cards = Array.from(
      { length: 30 },
      (_, i) =>
        `<div class="card"><a href="/n/${i}"><div>Notice ${i}: kept here for the members</div><div>Posted on Friday ${i}</div></a></div>`,
    ).join('');
    const page = `<html><head><title>Notices</title></head><body><form method="post" id="aspnetForm"><header>Site</header><h1>Notices</h1><div class="list">${cards}</div></form></body></html>`;
    for (const format of ['markdown', 'text', 'html'] as const) {
      const out = extractHtml(page, 'https://club.example/posts', format).content;
      expect([format, out.includes('Notice 29: kept here for the members')]).toEqual([format, true]);
      expect([format, out.includes('<form')]).toEqual([format, false]);
    }
    // A form on the page (a filter, a search): what it holds is not counted.
    expect(itemRun(wrapped('<h1>Posts</h1><form class="filters">POSTS</form>'))).toBeUndefined();
  });
});

describe("an article's own header and footer (rule articleParts)", () => {
  const RIVER = Array.from({ length: 12 }, (_, i) => ({
    headline: `${['Headphones gain new colours', 'Firmware update for the case', 'Adapter discontinued'][i % 3]}, story ${i + 1}`,
    teaser: `Teaser ${i + 1}: the maker released the update this week, and owners can install it from the settings of the paired phone.`,
  }));

  /** A topic page: a river of stories, each an article whose headline and teaser sit in its own header. */
  function riverPage(): string {
    const items = RIVER.map(
      (st, i) =>
        `<article class="river-article"><a href="/a/${i}"><img src="/i/${i}.jpg" alt=""></a><header><h2><a href="/a/${i}">${st.headline}</a></h2>` +
        `<p class="river-desc"><a href="/a/${i}">${st.teaser}</a></p><div class="river-aux"><a href="/editor/${i}">Editor ${i}</a> <time>1 month ago</time></div></header></article>`,
    ).join('');
    return page(
      'Headphones news',
      `<h1>headphones</h1><section class="col-main"><h2>Latest News</h2>${items}</section>`,
    );
  }

  it('a river of stories keeps each headline and teaser, and the page header still goes', () => {
    const html = riverPage();
    const text = extractHtml(html, 'https://news.example/topic/headphones', 'text').content;
    for (const st of RIVER) {
      expect(text).toContain(st.headline);
      expect(text).toContain(st.teaser);
    }
    expect(text).not.toContain('About');
    expect(text).not.toContain('All rights reserved');
    const without = extractHtml(html, 'https://news.example/topic/headphones', 'text', {
      rules: { ...ALL_RULES, articleParts: false },
    }).content;
    expect(RIVER.filter((st) => !without.includes(st.teaser)).length).toBeGreaterThan(6);
  });
});

describe("a page's <main> (rule mainBlock)", () => {
  const wrap = (cls: string, inner: string) =>
    `<div class="section ${cls}"><div class="container"><div class="row">${inner}</div></div></div>`;
  const WHY = [
    'Teams tell us the same thing: their old tracker grew slow as it grew large, and the time spent keeping it tidy was time not spent shipping, week after week.',
    'We built this one to stay fast at any size, so that a board of ten thousand issues opens as quickly as a board of ten, and a search across every project answers before you finish typing.',
    'It works offline, too: changes made on a train are kept, merged and sent when the connection comes back, with nothing lost and nothing sent twice.',
  ];
  const FEATURES = [
    'Boards that update as you type',
    'Cycles that close themselves on time',
    'Imports from every tracker you use',
    'Views saved for each member of the team',
    'Reminders sent before a deadline slips',
    'Reports on what shipped, week by week',
    'Keyboard shortcuts for every action',
    'Integrations with chat, mail and source control',
  ];
  const SECTIONS = [
    wrap(
      'hero',
      `<h1>Plan your team's work</h1><span>One place for the roadmap, the sprints and the bugs.</span>`,
    ),
    wrap('features', `<h2>Features</h2><ul>${FEATURES.map((f) => `<li>${f}</li>`).join('')}</ul>`),
    wrap('story', `<h2>Why teams switch</h2>${WHY.map((p) => `<p>${p}</p>`).join('')}`),
    wrap(
      'plans',
      `<h2>Plans</h2><div class="plan"><h3>Free</h3><span>Up to ten members and two teams.</span></div><div class="plan"><h3>Business</h3><span>Unlimited members, audit logs and single sign-on.</span></div>`,
    ),
    wrap(
      'faq',
      `<h2>Questions</h2><h3>Can I import my data?</h3><span>Yes, from spreadsheets and the trackers most teams use.</span><h3>Is there a free trial?</h3><span>Every paid plan starts with fourteen days free.</span><h3>Can I cancel at any time?</h3><span>Yes, and your data stays yours to export for ninety days.</span><h3>Where is my data kept?</h3><span>In the region you choose when the workspace is made.</span>`,
    ),
  ];
  const landing = (head = '') =>
    `<html><head><title>Plan your team's work</title>${head}</head><body><header><a href="/">Home</a> <a href="/login">Log in</a></header>` +
    `<main>${SECTIONS.join('')}</main><footer><p>© The company. All rights reserved.</p></footer></body></html>`;
  const SAID = [
    'Boards that update as you type',
    'Unlimited members, audit logs',
    'fourteen days free',
    'stay fast at any size',
  ];

  it('a landing page keeps every section of its <main>, not only the one with the most prose', () => {
    const text = extractHtml(landing(), 'https://tracker.example/', 'text').content;
    for (const s of SAID) expect(text).toContain(s);
    expect(text).not.toContain('All rights reserved');
    const without = extractHtml(landing(), 'https://tracker.example/', 'text', {
      rules: { ...ALL_RULES, mainBlock: false },
    }).content;
    expect(without).toContain(WHY[1]);
    expect(SAID.filter((s) => !without.includes(s)).length).toBe(3);
  });

  it('a <main> half again the chosen section stands in: a pitch with its features and its questions', () => {
    const html =
      `<html><head><title>Plan your team's work</title></head><body><header><a href="/">Home</a></header><main>` +
      SECTIONS[0] +
      wrap('story', `<h2>Why teams switch</h2>${WHY.map((p) => `<p>${p}</p>`).join('')}`) +
      wrap(
        'features',
        `<h2>Features</h2><ul>${FEATURES.slice(0, 5)
          .map((f) => `<li>${f}</li>`)
          .join('')}</ul>`,
      ) +
      wrap(
        'faq',
        '<h2>Questions</h2><h3>Is there a free trial?</h3><span>Every paid plan starts with fourteen days free.</span>',
      ) +
      '</main><footer><p>© The company. All rights reserved.</p></footer></body></html>';
    const text = extractHtml(html, 'https://tracker.example/', 'text').content;
    for (const s of [WHY[2], FEATURES[4], 'fourteen days free']) expect(text).toContain(s);
    const without = extractHtml(html, 'https://tracker.example/', 'text', {
      rules: { ...ALL_RULES, mainBlock: false },
    }).content;
    expect(without).toContain(WHY[2]);
    expect(without).not.toContain('fourteen days free');
  });

  it("an og:type of article beside JSON-LD that names a WebPage is the site's default: <main> stands in", () => {
    const ld = JSON.stringify({
      '@context': 'https://schema.org',
      '@graph': [
        { '@type': 'WebPage', name: "Plan your team's work" },
        { '@type': 'WebSite', name: 'Tracker' },
      ],
    });
    const html = landing(
      `<meta property="og:type" content="article"><script type="application/ld+json">${ld}</script>`,
    );
    const text = extractHtml(html, 'https://tracker.example/', 'text').content;
    for (const s of SAID) expect(text).toContain(s);
  });

  it("a shop's <main> whose chosen block was a short corner keeps its cards (teasers) too", () => {
    const card = (s: string, i: number) =>
      `<div class="${s}-card"><h3><a href="/market/${s}-${i}">Handmade ${s} wallet no. ${i}</a></h3>` +
      `<span>Ships from a small workshop in ${['Lisbon', 'Porto', 'Braga'][i % 3]}, wrapped in paper</span><span>$${20 + i}.00</span></div>`;
    const section = (s: string, title: string) =>
      wrap(s, `<h2>${title}</h2>${[1, 2, 3].map((i) => card(s, i)).join('')}`);
    const intro = wrap(
      'intro',
      '<p>Find something made by hand: wallets cut, stitched and edged by independent makers, each one a little different from the next, in leather tanned with bark.</p>' +
        '<p>Every maker here sells what they make themselves, ships it from their own workshop, and answers your questions before and after you buy.</p>',
    );
    const html =
      '<html><head><title>Handmade wallets</title></head><body><header><a href="/">Home</a></header>' +
      `<main>${intro}${section('featured', 'Featured')}${section('new', 'New arrivals')}${section('sale', 'On sale')}</main>` +
      '<footer><p>© Market</p></footer></body></html>';
    const url = 'https://market.example/wallets';
    const text = extractHtml(html, url, 'text').content;
    for (const s of ['featured', 'new', 'sale']) expect(text).toContain(`Handmade ${s} wallet no. 2`);
    const without = extractHtml(html, url, 'text', { rules: { ...ALL_RULES, mainBlock: false } }).content;
    expect(without).not.toContain('Handmade sale wallet no. 2');
  });

  it('a page that states it is an article keeps the block chosen', () => {
    const html = landing('<meta property="og:type" content="article">');
    const text = extractHtml(html, 'https://tracker.example/', 'text').content;
    expect(text).toContain(WHY[1]);
    expect(text).not.toContain('fourteen days free');
  });
});

describe("blocks named as furniture that are a list's items (rule furnitureRuns)", () => {
  const ENTRIES = Array.from({ length: 20 }, (_, i) => ({
    title: `${['Sparse attention', 'Bias-bounded judges', 'Tool-using agents', 'Graph priors'][i % 4]} for ${['vision', 'language', 'planning', 'speech', 'robots'][i % 5]}, part ${i + 1}`,
    authors: `Author ${String.fromCharCode(65 + (i % 26))}. Lee, Author ${i + 2} Kim, Author ${i + 3} Novak`,
  }));

  /** A list of papers: each entry's title, authors and subjects in a block named `meta`. */
  function papersPage(): string {
    const items = ENTRIES.map(
      (e, i) =>
        `<dt><a href="/abs/${i}">[${i + 1}] arXiv:2603.${10000 + i}</a> [<a href="/pdf/${i}">pdf</a>]</dt>` +
        `<dd><div class="meta"><div class="list-title">Title: ${e.title}</div><div class="list-authors">${e.authors}</div>` +
        `<div class="list-subjects">Subjects: Artificial Intelligence (cs.AI); Machine Learning (cs.LG)</div></div></dd>`,
    ).join('');
    return page(
      'Artificial Intelligence: recent submissions',
      `<h1>Artificial Intelligence</h1><h2>Authors and titles for recent submissions</h2><ul><li><a href="?d=1">Fri, 6 Mar</a></li><li><a href="?d=2">Thu, 5 Mar</a></li></ul><dl id="articles">${items}</dl>`,
    );
  }

  it("a list of papers keeps each entry's title and authors", () => {
    const html = papersPage();
    const url = 'https://papers.example/list/cs.AI/recent';
    const text = extractHtml(html, url, 'text').content;
    for (const e of ENTRIES) {
      expect(text).toContain(e.title);
      expect(text).toContain(e.authors);
    }
    const without = extractHtml(html, url, 'text', { rules: { ...ALL_RULES, furnitureRuns: false } }).content;
    expect(ENTRIES.filter((e) => !without.includes(e.title)).length).toBeGreaterThan(15);
  });

  it("a shop's cards named `caption` stay though its menus hold more text than its grid", () => {
    const menu = Array.from(
      { length: 150 },
      (_, i) =>
        `<li><a href="/c/${i}">${['Projector screens', 'Ceiling mounts', 'Sound bars'][i % 3]} ${i}</a></li>`,
    ).join('');
    const cards = Array.from(
      { length: 12 },
      (_, i) =>
        `<div class="category-product"><a class="thumbnail" href="/p/${i}"><img src="/i/${i}.jpg" alt=""></a>` +
        `<a class="plbox" href="/p/${i}"><div class="caption center"><div class="name">Laser projector model LK${900 + i} 4K</div>` +
        `<div>Manufacturer: Brand ${i}</div><h3>Item Number: LK-${900 + i}</h3><div>Price: $${4000 + i * 100}.00</div></div></a></div>`,
    ).join('');
    // One form around the whole page, as ASP.NET writes it.
    const html =
      `<html><head><title>Native 4K projectors</title></head><body><form method="post" id="MainForm">` +
      `<header><nav><ul>${menu}</ul></nav></header><div class="page"><h1>Native 4K projectors</h1>` +
      `<div class="count">Products 1-12 of 12</div><div class="product-list">${cards}</div></div>` +
      `<footer><p>© The shop. All rights reserved.</p></footer></form></body></html>`;
    const url = 'https://shop.example/native-4k-projectors';
    const text = extractHtml(html, url, 'text').content;
    for (let i = 0; i < 12; i++) expect(text).toContain(`Laser projector model LK${900 + i} 4K`);
    expect(text).not.toContain('Ceiling mounts');
    const without = extractHtml(html, url, 'text', { rules: { ...ALL_RULES, furnitureRuns: false } }).content;
    expect(without).not.toContain('Laser projector model');
  });

  it('blocks named as furniture that hold a small share of the page still go', () => {
    const body = Array.from(
      { length: 12 },
      (_, i) =>
        `<p>Paragraph ${i + 1}: the council met again on Tuesday to weigh the plan for the river crossing, its cost and its schedule, and heard from the engineers who drew it.</p>`,
    ).join('');
    const tags = Array.from(
      { length: 5 },
      (_, i) =>
        `<div class="tags">Filed under ${i}: ${'council, bridge, river crossing, budget, schedule, engineers, ferry, '.repeat(3)}</div>`,
    ).join('');
    const html = page('The crossing', `<article><h1>The crossing</h1>${body}${tags}</article>`);
    for (const rules of [ALL_RULES, { ...ALL_RULES, furnitureRuns: false }]) {
      const text = extractHtml(html, 'https://news.example/crossing', 'text', { rules }).content;
      expect(text).toContain('Paragraph 12');
      expect(text).not.toContain('Filed under');
    }
  });
});

describe('blocks that repeat the blocks before them (rule repeats)', () => {
  const FEATURES = [
    'Every pair is knitted with a cushioned sole that runs from the heel to the toe.',
    'A band of support around the arch keeps the sock in place through a long day.',
    'The toe is linked flat, with no seam to rub where the shoe bends.',
  ];
  // A shop prints the same features once for each colour it sells; one is shown at a time.
  const variant = (colour: string) =>
    `<div class="variant" data-colour="${colour}">${FEATURES.map((f) => `<p>${f}</p>`).join('')}</div>`;
  const shop = page(
    'Quarter socks',
    `<h1>Quarter socks</h1><p>Our everyday sock, in six colours, cut just above the ankle for shoes of every kind.</p>` +
      ['grey', 'navy', 'black', 'white', 'olive', 'red'].map(variant).join(''),
  );
  const times = (text: string, s: string) => text.split(s).length - 1;

  it("a shop's features printed once for each variant are read once", () => {
    const text = extractHtml(shop, 'https://shop.example/socks', 'text').content;
    for (const f of FEATURES) expect(times(text, f)).toBe(1);
    expect(text).toContain('Our everyday sock');
    const without = extractHtml(shop, 'https://shop.example/socks', 'text', {
      rules: { ...ALL_RULES, repeats: false },
    }).content;
    expect(times(without, FEATURES[0])).toBe(6);
  });

  it('the same groups of paragraphs flattened into one block are read once too', () => {
    const flat = page(
      'Quarter socks',
      `<article><h1>Quarter socks</h1>${FEATURES.map((f) => `<p>${f}</p>`)
        .join('')
        .repeat(5)}</article>`,
    );
    const text = extractHtml(flat, 'https://shop.example/socks', 'text').content;
    for (const f of FEATURES) expect(times(text, f)).toBe(1);
    const without = extractHtml(flat, 'https://shop.example/socks', 'text', {
      rules: { ...ALL_RULES, repeats: false },
    }).content;
    expect(times(without, FEATURES[2])).toBe(5);
  });

  it('short repeats, repeats apart and lines of one paragraph stay', () => {
    const jobs = Array.from(
      { length: 6 },
      (_, i) =>
        `<div class="job"><h3>Welder, shift ${i + 1}</h3><p>Full time, on site, from the first of the month.</p><p>Apply now</p></div>`,
    ).join('');
    const tour = Array.from({ length: 12 }, (_, i) => `June ${i + 1} -- The arena, Springfield<br>`).join('');
    const quote =
      'We will keep the ferry running until the new bridge opens, whatever it costs us this year.';
    const html = page(
      'Jobs and dates',
      `<article><h1>Jobs and dates</h1>${jobs}<p>${tour}</p><p>${quote}</p><p>The mayor said it twice.</p><p>${quote}</p><p>${quote}</p></article>`,
    );
    const text = extractHtml(html, 'https://news.example/jobs', 'text').content;
    expect(times(text, 'Full time, on site')).toBe(6);
    expect(times(text, 'Apply now')).toBe(6);
    expect(times(text, 'The arena, Springfield')).toBe(12);
    // One paragraph said again, even at once, may be meant: it stays.
    expect(times(text, quote)).toBe(3);
  });

  it('stays bounded on a page of thousands of like blocks', () => {
    const many = page('Many', `<article><h1>Many</h1>${variant('grey').repeat(20_000)}</article>`);
    const text = extractHtml(many, 'https://shop.example/many', 'text').content;
    expect(times(text, FEATURES[1])).toBe(1);
  });
});
