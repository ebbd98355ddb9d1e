import * as fs from 'node:fs';
import * as path from 'node:path';
import { ALL_RULES } from '../../src/extract/rules';
import { firstWithin } from '../../src/extract/dom-measure';
import { extractHtml } from '../../src/extract/extract';
import { statesThread } from '../../src/extract/thread-page';
import { jsonLd } from '../../src/extract/json-ld';
import { parseHTML } from 'linkedom';

const fixture = (name: string) =>
  fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'extraction', name), 'utf8');

/** Kinds of page the article rules used to lose, each on a page written for it. */
describe('extraction of other kinds of page', () => {
  it("a product's description inside the shop's form is kept, its controls are not", () => {
    const html = fixture('product-in-form.html');
    const text = extractHtml(html, 'https://shop.example/decke', 'text').content;
    expect(text).toContain('Die zweilagige Decke aus weichem Fleece');
    expect(text).toContain('Lieferzeit: 15 bis 21 Tage');
    expect(text).not.toMatch(/In den Warenkorb|Grau|Name für die Stickerei/);
    const without = extractHtml(html, 'https://shop.example/decke', 'text', {
      rules: { ...ALL_RULES, textForms: false },
    }).content;
    expect(without).not.toContain('Die zweilagige Decke');
  });

  it('a page whose html holds little of its article gives the article its JSON-LD states', () => {
    const body = [
      'Der Stadtrat hat am Abend den Haushalt für das kommende Jahr beschlossen.',
      'Die größten Posten sind die Sanierung von drei Schulen und der Ausbau der Radwege.',
      'Die Opposition kritisierte die neuen Schulden, die Mehrheit verwies auf niedrige Zinsen und dringenden Bedarf.',
      'Der Haushalt tritt am ersten Januar in Kraft, sofern die Aufsichtsbehörde ihn genehmigt.',
    ];
    const ld = {
      '@context': 'https://schema.org',
      '@type': 'NewsArticle',
      headline: 'Haushalt beschlossen',
      articleBody: body.join('\n\n'),
    };
    const html = `<html><head><title>Haushalt beschlossen</title><script type="application/ld+json">${JSON.stringify(ld)}</script></head><body><div id="app"><h1>Haushalt beschlossen</h1><p>${body[0]}</p></div><script src="/app.js"></script></body></html>`;
    const text = extractHtml(html, 'https://example.org/haushalt', 'text').content;
    for (const line of body) expect(text).toContain(line);
    const without = extractHtml(html, 'https://example.org/haushalt', 'text', {
      rules: { ...ALL_RULES, statedBody: false },
    }).content;
    expect(without).not.toContain(body[3]);
  });

  it('a script shell whose thread is in a <noscript>: the page is the <noscript>, as without scripts', () => {
    const posts = [
      'I moved the resolver to the second network and now every container resolves the old names first.',
      'Check the order of the search domains in the daemon settings; the first one that answers wins every time.',
      'That was it: the corporate domain came first, and it answers for every name, even the ones it does not hold.',
    ];
    const thread = `<h1>Confusing resolver structure</h1>${posts.map((p, i) => `<div class="crawler-post" id="post_${i + 1}"><span class="creator">user${i}</span><div class="post"><p>${p} ${p}</p></div></div>`).join('')}`;
    const shell = (inner: string) =>
      `<html><head><title>Confusing resolver structure - Forums</title></head><body><noscript><style>#splash{display:none}</style></noscript><section id="splash">Loading…</section><noscript data-path="/t/1">${inner}</noscript><div id="app"></div><script src="/app.js"></script></body></html>`;
    const text = extractHtml(shell(thread), 'https://forums.example/t/1', 'text').content;
    for (const p of posts) expect(text).toContain(p);
    const without = extractHtml(shell(thread), 'https://forums.example/t/1', 'text', {
      rules: { ...ALL_RULES, scriptText: false },
    }).content;
    expect(without).not.toContain(posts[0]);
    // A page that shows its own text keeps it, and its <noscript> notice stays out.
    const shown = `<html><head><title>Resolvers</title></head><body><article><h1>Resolvers</h1><p>${posts.join(' ')}</p></article><noscript><div><p>${'Please turn on JavaScript to see the comments and the rest of this site. '.repeat(6)}</p></div></noscript></body></html>`;
    expect(extractHtml(shown, 'https://forums.example/r', 'text').content).not.toContain('Please turn on');
  });

  it('a page that states it is a thread (DiscussionForumPosting) keeps its posts named as comments', () => {
    const posts = [
      'The build finishes in ten minutes on my desktop and in forty on the laptop, with the same settings.',
      'Your laptop throttles under a long load: watch the clock speed while it builds and you will see it fall.',
      'Thanks, a cooling pad and a lower power limit brought it to fifteen minutes, which is good enough for me.',
    ];
    const page = (ld: string) =>
      `<html><head><title>Slow builds</title>${ld}</head><body><h1>Slow builds on a laptop</h1><div class="meta">Started by someone, May 5 · Followers 3 · Share this topic · Tags: build, laptop, performance, cooling, desktop, settings · Reply to this topic · Start new topic · Prev page · Next page</div><div id="comments">${posts.map((p) => `<div class="comment-wrap"><div class="author">member</div><div class="comment-content"><p>${p} ${p}</p></div></div>`).join('')}</div></body></html>`;
    const ld = `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'DiscussionForumPosting', headline: 'Slow builds on a laptop' })}</script>`;
    const text = extractHtml(page(ld), 'https://forum.example/topic/1', 'text').content;
    for (const p of posts) expect(text).toContain(p);
    // The statement is read from JSON-LD (a graph's item too) or from the microdata item around
    // the heading; an article with comments says Article.
    const doc = (head: string, body = '<h1>Slow builds</h1>') =>
      parseHTML(`<html><head>${head}</head><body>${body}</body></html>`).document;
    const lds = (d: Document) => Array.from(d.querySelectorAll('script[type="application/ld+json"]'));
    const says = (d: Document) => statesThread(d, d.querySelector('h1') ?? undefined, jsonLd(lds(d)));
    const graph = `<script type="application/ld+json">{"@graph": [{"@type": "WebPage"}, {"@type": ["QAPage"]}]}</script>`;
    const article = `<script type="application/ld+json">{"@type": "Article", "comment": [{"@type": "Comment"}]}</script>`;
    expect(says(doc(ld))).toBe(true);
    expect(says(doc(graph))).toBe(true);
    expect(
      says(
        doc(
          '',
          '<div itemscope itemtype="https://schema.org/DiscussionForumPosting"><h1>Slow builds</h1></div>',
        ),
      ),
    ).toBe(true);
    expect(says(doc(article))).toBe(false);
    expect(says(doc('<script type="application/ld+json">{"@type": "QAPage"</script>'))).toBe(false);
    expect(
      says(
        doc(
          '',
          '<h1>Slow builds</h1><div itemscope itemtype="https://schema.org/DiscussionForumPosting"></div>',
        ),
      ),
    ).toBe(false);
  });

  it("a question and its answers, marked up as such, are the page's content, not the question alone", () => {
    const question = [
      'I have a coroutine that fetches three pages one after the other, and it takes as long as fetching them in a row.',
      'I expected the awaits to overlap, since each of them waits on the network and not on the processor at all.',
      'What do I need to change so that the three requests run at the same time and the whole takes as long as the slowest?',
    ];
    const answers = [
      'Awaiting each call in turn runs them in turn: gather them instead, and the event loop runs all three at once.',
      'Create the tasks first and await them afterwards; a task starts as soon as it is created, not when it is awaited.',
    ];
    const card = `<div class="user-info"><a href="/users/1">member one</a> <a href="/users/1?tab=badges">3 gold badges</a> <a href="/users/1?tab=badges">14 silver badges</a> <a href="/users/1?tab=badges">20 bronze badges</a></div>`;
    const post = (type: string, texts: string[], extra = '') =>
      `<div class="post-layout" itemscope itemtype="https://schema.org/${type}"><div class="votecell"><button>Up vote</button><span>12</span><button>Down vote</button></div><div class="postcell"><div class="s-prose js-post-body" itemprop="text">${texts.map((t) => `<p>${t}</p>`).join('')}</div><div class="post-menu"><a href="#">Share</a> <a href="#">Improve this answer</a> <a href="#">Follow</a></div>${card}${card}${extra}</div></div>`;
    const html = `<html><head><title>Running awaits at the same time</title></head><body itemscope itemtype="https://schema.org/QAPage"><div id="content"><h1>Running awaits at the same time</h1><div id="question">${post('Question', [...question, ...question], '<div class="comments"><span>Add a comment</span></div>')}</div><div id="answers"><h2>2 Answers</h2><div class="sorted">Sorted by: Highest score (default) Trending Date modified Date created</div>${answers.map((a) => `<div class="answer">${post('Answer', [a])}</div>`).join('<div class="ad">Advertisement</div>')}</div></div><div id="sidebar"><h3>Related</h3><ul><li><a href="/q/1">How do I fetch pages?</a></li><li><a href="/q/2">Why is my loop slow?</a></li></ul></div></body></html>`;
    const text = extractHtml(html, 'https://qa.example/q/9', 'text').content;
    for (const t of [...question, ...answers]) expect(text).toContain(t);
    expect(text).not.toMatch(/Improve this answer|Up vote|How do I fetch pages/);
    const without = extractHtml(html, 'https://qa.example/q/9', 'text', {
      rules: { ...ALL_RULES, statedPosts: false },
    }).content;
    expect(answers.every((a) => without.includes(a)) && !/Improve this answer|Up vote/.test(without)).toBe(
      false,
    );
  });

  it('a page of items whose chosen block is a short corner of it is read whole, less its furniture', () => {
    const items = Array.from(
      { length: 14 },
      (_, i) =>
        `<li class="card"><h3><a href="/item/${i}">Walnut desk organiser number ${i}</a></h3><span>Holds pens, cables and a phone upright; oiled by hand in a small workshop.</span><span class="price">$${20 + i}.00</span></li>`,
    ).join('');
    const html = `<html><head><title>Desk accessories</title></head><body><header><nav><a href="/">Home</a> <a href="/shop">Shop</a></nav></header><main><div class="intro"><h1>Desk accessories</h1><p>Everything for a tidy desk, made to last and shipped within two days of your order from our workshop.</p></div><ul class="grid">${items}</ul></main><footer><p>Our shop is open Monday to Friday.</p></footer></body></html>`;
    const text = extractHtml(html, 'https://shop.example/desk', 'text').content;
    expect(text).toContain('Walnut desk organiser number 13');
    expect(text).not.toContain('Monday to Friday');
    const without = extractHtml(html, 'https://shop.example/desk', 'text', {
      rules: { ...ALL_RULES, thinArticle: false, itemRuns: false, mainBlock: false },
    }).content;
    expect(without).not.toContain('Walnut desk organiser number 13');
  });

  it("a product page's customer reviews are not its content, however long; an article's section so named is", () => {
    const about = [
      'The Trail 25 pack keeps a day of gear within easy reach, with a padded back panel and a hip belt that carries the load.',
      'Side pockets hold two bottles, the lid holds a map and snacks, and the main compartment opens wide for a jacket and lunch.',
      'Made of recycled nylon with a water-repellent finish; the frame sheet comes out for washing, and the straps adjust for most torsos.',
    ];
    const reviews = Array.from(
      { length: 12 },
      (_, i) =>
        `<div class="review"><h4>Review ${i + 1}: great for day hikes</h4><p>I took this pack on ${i + 2} hikes this summer and it carried everything I needed without hurting my shoulders, though the hip belt pockets are small for a phone.</p></div>`,
    ).join('');
    const ld = (type: string) =>
      `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': type, name: 'Trail 25 pack' })}</script>`;
    const page = (type: string) =>
      `<html><head><title>Trail 25 pack</title>${ld(type)}</head><body><main><h1>Trail 25 pack</h1><div class="description">${about.map((p) => `<p>${p}</p>`).join('')}</div>` +
      `<section id="reviews" class="product-reviews"><h2>Customer reviews</h2>${reviews}</section></main></body></html>`;
    const url = 'https://shop.example/trail-25';
    const text = extractHtml(page('Product'), url, 'text').content;
    for (const p of about) expect(text).toContain(p);
    expect(text).not.toContain('great for day hikes');
    const off = extractHtml(page('Product'), url, 'text', {
      rules: { ...ALL_RULES, reviews: false },
    }).content;
    expect(off).toContain('Review 12: great for day hikes');
    // A page may state it is a product by its og:type alone.
    const og = page('Thing').replace('</head>', '<meta property="og:type" content="product"></head>');
    expect(extractHtml(og, url, 'text').content).not.toContain('great for day hikes');
    expect(extractHtml(page('Thing'), url, 'text').content).toContain('Review 12: great for day hikes');
    // A review article states it is one: its reviews are what it is.
    expect(extractHtml(page('Review'), url, 'text').content).toContain('Review 12: great for day hikes');
    expect(extractHtml(page('Article'), url, 'text').content).toContain('Review 12: great for day hikes');
  });

  it("a product page read whole is cleaned as an article: the shop's grid of other products goes", () => {
    const features = [
      'three flowing layers of hemp cut on the bias',
      'a side zip hidden in the seam',
      'one deep pocket on the right side',
      'straps that adjust at the back',
      'a lining of soft organic cotton',
      'a hem that falls just below the knee',
      'dyes free of azo compounds',
      'seams finished by hand in the workshop',
      'a loop inside for hanging it up',
      'buttons made of coconut shell',
      'a fabric that softens with every wash',
      'a weight of 160 grams per square metre',
      'a fit that runs true to size',
      'a cut that suits every season',
      "a label sewn with the maker's name",
    ].map((f) => `<li>The dress has ${f}, as each of our dresses does.</li>`);
    const others = Array.from(
      { length: 12 },
      (_, i) =>
        `<li class="product-card"><a href="/shop/linen-dress-${i}"><h3>Linen summer dress number ${i}</h3></a><span class="price">$${40 + i}.00</span> <a class="button" href="/cart?add=${i}">Add to basket</a></li>`,
    ).join('');
    // Readability keeps the short description alone: the page less its furniture stands in.
    const page = (head: string) =>
      `<html><head><title>Iris hemp dress</title>${head}</head><body><header><nav><a href="/">Home</a> <a href="/shop">Shop</a></nav></header>` +
      `<div class="product"><h1>Iris hemp dress</h1><p class="price">$150.00</p><ul class="features">${features.join('')}</ul>` +
      `<div role="tabpanel"><h3>Description</h3><p>We are in love with the Iris dress. The iris is a flower of creativity, and this dress blooms with every layer, giving the ease and comfort of nature to whoever wears it.</p></div></div>` +
      `<section class="related products"><h2>Related products</h2><ul class="grid">${others}</ul></section><footer><p>Free shipping over $150.</p></footer></body></html>`;
    const url = 'https://shop.example/iris';
    const ld = `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'Product', name: 'Iris hemp dress' })}</script>`;
    for (const head of ['<meta property="og:type" content="product">', ld]) {
      const text = extractHtml(page(head), url, 'text').content;
      expect(text).toContain('buttons made of coconut shell');
      expect(text).toContain('a flower of creativity');
      expect(text).not.toContain('Linen summer dress number');
      expect(text).not.toContain('Related products');
      const off = extractHtml(page(head), url, 'text', {
        rules: { ...ALL_RULES, productPage: false },
      }).content;
      expect(off).toContain('Linen summer dress number 11');
      expect(off).toContain('buttons made of coconut shell');
    }
    // A page that does not say it is a product may be a list: its grid stays.
    expect(extractHtml(page(''), url, 'text').content).toContain('Linen summer dress number 11');
  });

  it("a shop's heading for other products ends the product's description", () => {
    const about = [
      'The Zero wallet holds six cards and a few folded notes in a body no thicker than a pencil, cut from one piece of vegetable-tanned leather.',
      'Its edges are burnished by hand, and the stitching is waxed linen thread that will outlast the leather around it.',
      'A thumb slot on the back pushes the cards up, so the one you need comes out first without fanning the rest.',
      'The leather darkens with use and takes the shape of what you carry; after a year no two wallets look alike.',
      'Every wallet is made in our workshop in Tallinn and comes with a ten-year guarantee against faults in its making.',
    ];
    const others = ['One', 'Two', 'Card', 'Key']
      .map(
        (n, i) => `<div class="item"><p>Nord ${n} holder in black leather</p><p>€${39 + i * 10}.00</p></div>`,
      )
      .join('');
    for (const heading of [
      'Related products',
      'Customers also bought',
      'Recently viewed',
      'Frequently bought together',
    ]) {
      const html = `<html><head><title>Nord Zero wallet</title></head><body><main><article><h1>Nord Zero wallet</h1>${about.map((p) => `<p>${p}</p>`).join('')}<h2>${heading}</h2>${others}</article></main></body></html>`;
      const text = extractHtml(html, 'https://shop.example/zero', 'text').content;
      expect(text).toContain('ten-year guarantee');
      expect(text).not.toContain('Nord Key holder');
    }
  });

  it('soft hyphens leave the text and the markdown, and stay in the html', () => {
    const words = 'Die Zusammen&shy;arbeit der Gemein\u00adden wird ausgebaut, sagt die Bürger­meisterin. ';
    const html = `<html><head><title>Zusammenarbeit</title></head><body><article><h1>Zusammenarbeit</h1><p>${words.repeat(12)}</p></article></body></html>`;
    const x = extractHtml(html, 'https://example.org/z', 'text', { formats: ['markdown', 'html'] });
    for (const f of ['text', 'markdown'] as const) {
      expect(x.contents![f]).toContain(
        'Die Zusammenarbeit der Gemeinden wird ausgebaut, sagt die Bürgermeisterin.',
      );
      expect(x.contents![f]).not.toContain('\u00ad');
    }
    expect(x.contents!.html).toContain('\u00ad');
  });
  it('letters written with combining marks are composed in the text and the markdown, and stay in the html', () => {
    // "für" and "Kindersitze" as some editors write them: u and U+0308; and a Bengali letter
    // whose composed form is two code points (U+09DF is y and U+09BC in NFC).
    const words = 'Neue Kindersitze fu\u0308r Babys im Test, sagt der Club. \u09DF. ';
    const html = `<html><head><title>Kindersitze</title></head><body><article><h1>Kindersitze</h1><p>${words.repeat(12)}</p></article></body></html>`;
    const x = extractHtml(html, 'https://example.org/k', 'text', { formats: ['markdown', 'html'] });
    for (const f of ['text', 'markdown'] as const) {
      expect(x.contents![f]).toContain('Neue Kindersitze f\u00fcr Babys im Test');
      expect(x.contents![f]).toContain('\u09AF\u09BC');
      expect(x.contents![f]).not.toContain('u\u0308');
    }
    expect(x.contents!.html).toContain('fu\u0308r');
  });

  it("a forum thread's posts are its content, though they are built and named as comments", () => {
    const html = fixture('forum-thread.html');
    const url = 'https://potager.example/forum/tomates-noircissent';
    const text = extractHtml(html, url, 'text').content;
    expect(text).toContain('depuis une semaine les tomates de mes six pieds');
    expect(text).toContain("Ce n'est pas une maladie mais la nécrose apicale");
    expect(text).toContain('Enlevez les fruits abîmés');
    expect(text).not.toMatch(/Vous devez vous connecter|Nos partenaires|Mentions légales/);
    // The page's <main> holds the posts too (rule mainBlock): off with it, Readability drops them.
    const without = extractHtml(html, url, 'text', {
      rules: { ...ALL_RULES, threads: false, mainBlock: false },
    }).content;
    expect(without).not.toContain('nécrose apicale');
  });

  it('a post between two reply buttons is not a comment thread', () => {
    const text = extractHtml(
      fixture('forum-one-post.html'),
      'https://forum.example/viewtopic.php?t=88',
      'text',
    ).content;
    expect(text).toContain('Wir haben beim Neubau eine Zisterne mit 6.000 Litern eingeplant');
    expect(text).toContain('spart das rund 40 Prozent des Trinkwassers');
    expect(text).not.toContain('Wer ist online');
  });

  it('a thread whose first post is built as its replies, which alone are marked up as comments, keeps them all', () => {
    const said = [
      'I want to buy a fitness band under two hundred dollars that measures sleep and heart rate, and lasts a week on a charge. I run three times a week and sleep badly, so the sleep data matters most to me. Which one would you pick, and why?',
      'I have worn the cheaper of the two bands for a year: the battery lasts nine days, the sleep graphs match how I feel, and the strap has not cracked yet.',
      'Mine stopped syncing after a firmware update twice, so look at how often the maker ships fixes before you buy; the hardware was fine in both cases.',
      'If you swim, check the water rating: the band I had fogged up inside after a month of laps, though the shop replaced it without a question.',
    ];
    const post = (i: number, first: boolean) =>
      `<article class="message ${first ? 'message-threadStarterPost ' : ''}message--post js-post" id="post-${i}"` +
      `${first ? '' : ' itemscope itemtype="https://schema.org/Comment"'}>` +
      `<div class="message-user"><a href="/members/${i}">member${i}</a></div>` +
      `<div class="message-content"><div class="bbWrapper"${first ? '' : ' itemprop="text"'}>${said[i]}</div></div>` +
      '<footer><a href="#like">Like</a> <a href="#reply">Reply</a></footer></article>';
    const html =
      '<html><head><title>Best band under $200</title></head><body><h1 class="p-title-value">Best band under $200</h1>' +
      '<div class="p-description">Thread starter member0 · Start date Oct 21, 2022</div>' +
      '<ul class="p-breadcrumbs"><li><a href="/">Home</a></li><li><a href="/forums">Forums</a></li><li><a href="/forums/wearables">Wearables and connected tech</a></li></ul>' +
      '<div class="notice">You are using an out of date browser. It may not display this or other websites correctly.</div>' +
      `<div class="block-body">${said.map((_, i) => post(i, i === 0)).join('')}</div></body></html>`;
    const url = 'https://forum.example/threads/best-band-under-200.1051433/';
    const text = extractHtml(html, url, 'text').content;
    for (const s of said) expect(text).toContain(s);
    const without = extractHtml(html, url, 'text', { rules: { ...ALL_RULES, threads: false } }).content;
    // Without it, the posts go as an article's comments would (the first with them, in their block).
    expect(said.slice(1).filter((s) => without.includes(s))).toEqual([]);
  });

  it("an article's comments still go when they follow the article", () => {
    const post = (who: string, said: string) =>
      `<li class="ForumComment"><span>${who}</span><p>${said.repeat(4)}</p><a href="#r">Reply</a></li>`;
    const article =
      '<p>The council voted on Tuesday to close the old bridge to cars from the first of June, after an inspection found the steel of its main span corroded well past what the engineers had expected.</p>'.repeat(
        3,
      );
    const html = `<html><head><title>Old bridge to close to cars</title></head><body><h1>Old bridge to close to cars</h1><article>${article}</article><ol class="comments">${post('ann', 'About time, that bridge shakes when a bus goes over it. ')}${post('bob', 'What about the cyclists who cross it every morning? ')}</ol></body></html>`;
    const text = extractHtml(html, 'https://news.example/bridge', 'text').content;
    expect(text).toContain('main span corroded');
    expect(text).not.toMatch(/About time|cyclists/);
  });
  it.each([
    [
      'de',
      'Das könnte Sie auch interessieren',
      'Die Gemeinde hat den Bau der neuen Sporthalle beschlossen, die im Herbst fertig sein soll. ',
    ],
    [
      'es',
      'Noticias relacionadas',
      'El ayuntamiento aprobó la construcción del nuevo polideportivo, que abrirá en otoño. ',
    ],
    [
      'de',
      'Zum Weiterlesen',
      'Der Kreistag hat die neue Buslinie ins Nachbartal mit großer Mehrheit beschlossen. ',
    ],
    ['de', 'Mehr zu Verkehr und Umwelt', 'Die Stadtwerke stellen bis zum Sommer alle Busse auf Strom um. '],
    ['fr', 'Commentaires', 'La mairie a voté la construction du nouveau gymnase, qui ouvrira à la rentrée. '],
    [
      'pl',
      'Czytaj także',
      'Rada gminy zatwierdziła budowę nowej hali sportowej, która zostanie otwarta jesienią. ',
    ],
  ])('an article in %s ends at a heading that says "%s"', (lang, heading, sentence) => {
    const teasers = [1, 2, 3]
      .map((i) => `<p>Teaser ${i}: ${sentence.slice(0, 40)} <a href="/t/${i}">/t/${i}</a></p>`)
      .join('');
    const html = `<html lang="${lang}"><head><title>T</title></head><body><article><h1>T</h1>${`<p>${sentence.repeat(3)}</p>`.repeat(4)}<h2>${heading}</h2>${teasers}</article></body></html>`;
    const text = extractHtml(html, 'https://example.org/a', 'text').content;
    expect(text).toContain(sentence.trim());
    expect(text).not.toMatch(/Teaser \d/);
    expect(text).not.toContain(heading);
    const without = extractHtml(html, 'https://example.org/a', 'text', {
      rules: { ...ALL_RULES, articleEnd: false },
    }).content;
    expect(without).toContain('Teaser 1');
  });
  it('a recipe page gives the ingredients and steps its JSON-LD states when the article lacks them', () => {
    const html = fixture('recipe-card.html');
    const url = 'https://crumb.example/rye-crackers';
    const x = extractHtml(html, url, 'markdown', { formats: ['text'] });
    expect(x.contents!.text).toContain('Every baker who keeps a starter');
    expect(x.content).toContain('- 150 g sourdough discard');
    expect(x.content).toContain('- 1 tbsp caraway seeds');
    expect(x.content).toContain('1. Stir the discard, rye flour and olive oil');
    expect(x.content).toContain('3. Scatter the salt and caraway over it and bake at 180 °C');
    expect(x.content).not.toMatch(/Print Recipe|Popular/);
    const without = extractHtml(html, url, 'text', { rules: { ...ALL_RULES, statedRecipe: false } }).content;
    expect(without).not.toContain('caraway seeds');
  });

  it('a recipe the article already holds is not added again', () => {
    const steps = ['Whisk the eggs with the milk.', 'Fry the batter in butter until golden.'];
    const ld = {
      '@type': 'Recipe',
      recipeIngredient: ['2 eggs', '200 ml milk'],
      recipeInstructions: steps.join('\n'),
    };
    const story =
      '<p>Pancakes on a Sunday morning are a family habit that goes back three generations in our house.</p>'.repeat(
        3,
      );
    const html = `<html><head><title>Pancakes</title><script type="application/ld+json">${JSON.stringify(ld)}</script></head><body><article><h1>Pancakes</h1>${story}<ul><li>2 eggs</li><li>200 ml milk</li></ul><ol>${steps.map((s) => `<li>${s}</li>`).join('')}</ol></article></body></html>`;
    const text = extractHtml(html, 'https://example.org/pancakes', 'text').content;
    expect(text.split('Fry the batter').length).toBe(2);
    expect(text.split('200 ml milk').length).toBe(2);
  });
  it('a stated recipe is read within bounds: 200 lines, 32 levels deep', () => {
    const open = '{"@type":"HowToSection","itemListElement":['.repeat(2000);
    const deep = `${open}{"@type":"HowToStep","text":"the deepest step"}${']}'.repeat(2000)}`;
    const ingredients = JSON.stringify(Array.from({ length: 100_000 }, (_, i) => `ingredient number ${i}`));
    const ld = `{"@type":"Recipe","recipeIngredient":${ingredients},"recipeInstructions":[${deep},"${'x'.repeat(1 << 20)}"]}`;
    const html = `<html><head><title>R</title><script type="application/ld+json">${ld}</script></head><body><article><h1>R</h1><p>${'A short story before the recipe. '.repeat(10)}</p></article></body></html>`;
    const text = extractHtml(html, 'https://example.org/r', 'text').content;
    expect(text).toContain('ingredient number 199');
    expect(text).not.toContain('ingredient number 200');
    expect(text).not.toContain('the deepest step');
    expect(text.length).toBeLessThan(20_000);
  });
  it("an article a script writes from its template, or holds in a <noscript>, is the page's text", () => {
    const html = fixture('article-in-template.html');
    const url = 'https://notes.example/2024/03/gauges.html';
    const noscriptOnly = html.replace(/<script type="text\/template">\s*<span[\s\S]*?<\/script>/, '');
    expect(noscriptOnly).not.toBe(html);
    for (const page of [html, noscriptOnly]) {
      const text = extractHtml(page, url, 'text').content;
      expect(text.split('For twenty years our gauges').length).toBe(2);
      expect(text).toContain('about half an hour earlier than it could last spring');
      expect(text).not.toMatch(/We value your privacy|partners use cookies/);
      const without = extractHtml(page, url, 'text', { rules: { ...ALL_RULES, scriptText: false } }).content;
      expect(without).not.toContain('For twenty years');
    }
  });

  it('a template of JSON, or one far from the heading, stays a script', () => {
    const words = 'The river rose a metre in forty minutes and the gauges saw it. '.repeat(8);
    const json = JSON.stringify({ type: 'Image', caption: `<p>${words}</p>` });
    const page = (inside: string) =>
      `<html><head><title>Gauges</title></head><body><h1>Gauges</h1><div class="post">${inside}</div><p>${'A short note. '.repeat(3)}</p></body></html>`;
    const url = 'https://notes.example/g';
    expect(
      extractHtml(page(`<script type="text/template">${json}</script>`), url, 'text').content,
    ).not.toContain('river rose');
    const far = `<p>${'Text between the heading and the template. '.repeat(6)}</p><div><script type="text/template"><p>${words}</p></script></div>`;
    expect(extractHtml(page(far), url, 'text').content).not.toContain('river rose');
    expect(
      extractHtml(page(`<script type="text/template"><p>${words}</p></script>`), url, 'text').content,
    ).toContain('river rose');
  });
  it('of thousands of templates in one block, the first is put in the page and the rest stay scripts', () => {
    const words = 'The river rose a metre in forty minutes and the gauges saw it. '.repeat(6);
    const templates = Array.from(
      { length: 5000 },
      (_, i) => `<script type="text/template"><p>Template ${i}. ${words}</p></script>`,
    ).join('');
    const html = `<html><head><title>Gauges</title></head><body><h1>Gauges</h1><div class="post">${templates}</div></body></html>`;
    const text = extractHtml(html, 'https://notes.example/g', 'text').content;
    expect(text).toContain('Template 0.');
    expect(text).not.toContain('Template 1.');
  });
  it('a page with no <body> tag has its content after the head read as its body', () => {
    const story =
      '<p>Los conductores están invitados a la bendición anual de vehículos que se realiza este sábado sobre la avenida.</p>'.repeat(
        3,
      );
    const html = `<!DOCTYPE html><html lang=es><head><title>Bendición de vehículos</title></head> <a href=#content>Saltar</a><main><article><h1>Bendición de vehículos</h1>${story}</article></main></html>`;
    const x = extractHtml(html, 'https://example.org/b', 'text', { include: ['article p'] });
    expect(x.content).toContain('bendición anual de vehículos');
    expect(extractHtml(html, 'https://example.org/b', 'text').content).toContain(
      'bendición anual de vehículos',
    );
  });
  it('a how-to whose steps only its JSON-LD states gives them', () => {
    const ld = {
      '@type': 'HowTo',
      name: 'Sew a round tablecloth',
      supply: [
        { '@type': 'HowToSupply', name: 'Cotton fabric' },
        { '@type': 'HowToSupply', name: 'Pins' },
      ],
      step: [
        {
          '@type': 'HowToStep',
          itemListElement: {
            '@type': 'HowToDirection',
            text: '<p>Measure the diameter of the table top.</p>',
          },
        },
        {
          '@type': 'HowToStep',
          itemListElement: {
            '@type': 'HowToDirection',
            text: '<p>Fold the fabric in four and mark a quarter circle.</p>',
          },
        },
      ],
    };
    const html = `<html><head><title>Sew a round tablecloth</title><script type="application/ld+json">${JSON.stringify(ld)}</script></head><body><div id="app" data-props="{}"></div><div class="notice"><p>Your browser is out of date.</p></div></body></html>`;
    const text = extractHtml(html, 'https://diy.example/tablecloth', 'text').content;
    expect(text).toContain('Measure the diameter of the table top.');
    expect(text).toContain('Fold the fabric in four and mark a quarter circle.');
    expect(text).toContain('Cotton fabric');
  });
  it("the blocks that hold the page's heading are not dropped for names that sound like furniture", () => {
    const html = fixture('article-in-unlikely-wrapper.html');
    const url = 'https://harbour.example/night-ferry';
    const text = extractHtml(html, url, 'text').content;
    expect(text).toContain('the night ferry to the outer islands will sail again');
    expect(text).toContain('Tickets go on sale next week.');
    expect(text).not.toMatch(/affiliate links|Reader notice/);
    // Its wrapper holds most of the page: rule frames keeps it too.
    const without = extractHtml(html, url, 'text', {
      rules: { ...ALL_RULES, headingPath: false, frames: false },
    }).content;
    expect(without).not.toContain('the night ferry to the outer islands');
  });
  it('a frame that holds the page, named like its header, is not dropped for a block outside it', () => {
    const about = [
      'Nine distinct classes give a broad range of tactical abilities and personalities, and the game is updated with new modes and maps every season.',
      'Detailed training and offline practice modes help new players learn before they join one of the many game modes online.',
      'There are hundreds of weapons and hats to collect, craft, buy and trade, and none of them is needed to win.',
      'Maps range from a dusty farm to a snowbound dam, and each favours a different class, so a team that changes its mix wins more often.',
      'A community workshop adds new items every month, and the best of them are sold in the store with a share going to their makers.',
      'Servers run in every region, and matchmaking puts players of a similar skill together so that every round stays close to the end.',
      'Each class has its own voice, its own weapons and its own way of winning, from the medic who heals to the spy who slips behind the lines.',
      'The game is free to play from the first day, and what the store sells changes how a player looks, never how strong a player is.',
    ];
    const languages = [
      'English',
      'Russian',
      'Spanish',
      'Polish',
      'Portuguese',
      'Turkish',
      'French',
      'Czech',
      'Korean',
      'German',
    ]
      .map((l, i) => `<span class="lang">${l} Very Positive (${(i + 1) * 1371})</span>`)
      .join('<br>');
    const html =
      `<html><head><title>Fortress on the store</title></head><body><div class="page_frame with_header"><div class="store_menu"><a href="/">Store</a> <a href="/news">News</a></div>` +
      `<div class="page_content"><div class="app_name">Fortress</div><div id="about" class="game_description"><h2>About This Game</h2>${about.map((p) => `<p>${p}</p>`).join('')}</div></div></div>` +
      `<div class="filter_flyout"><div class="explanation"><p>Languages with enough reviews to generate a language-specific review score are split out below for ease of filtering, each with its own score and its own count of reviews.</p><p>Reviews written by players who bought the game elsewhere are counted apart, and reviews from players who got the game for free are left out of the score altogether, as are reviews the community marked as off-topic.</p></div>${languages}</div></body></html>`;
    const url = 'https://store.example/app/440';
    const text = extractHtml(html, url, 'text').content;
    for (const p of about) expect(text).toContain(p);
    const without = extractHtml(html, url, 'text', { rules: { ...ALL_RULES, frames: false } }).content;
    expect(without).not.toContain(about[0]);
  });

  describe('an article held only in the state a page renders from', () => {
    const body = [
      'The regional rail operator will add a second track between the two valley towns by 2027, the transport ministry announced on Monday.',
      'Trains on the single-track line now wait up to twelve minutes at passing loops, and a delay at one end of the line spreads to every train on it.',
      'The second track will allow a train every fifteen minutes at rush hour, twice as many as today, and the operator expects to carry a third more passengers.',
      'Work starts in the spring and the line will close for six weekends; replacement buses will run on those days and tickets stay valid on them.',
    ];
    const state = {
      props: {
        pageProps: {
          article: {
            title: 'Second track for the valley line',
            body: body.map((text) => ({ type: 'paragraph', text })),
          },
          related: [
            {
              title: 'Bus fares frozen',
              summary: 'The county froze bus fares for another year, the third freeze in a row.',
            },
          ],
        },
      },
    };
    const shell = (script: string) =>
      `<html><head><title>Second track for the valley line</title></head><body><div id="__next"><h1>Second track for the valley line</h1><p>Loading…</p></div>${script}</body></html>`;
    const pages = {
      next: shell(`<script id="__NEXT_DATA__" type="application/json">${JSON.stringify(state)}</script>`),
      assigned: shell(`<script>window.__INITIAL_STATE__ = ${JSON.stringify(state)};</script>`),
    };

    it.each(Object.entries(pages))('%s', (_, html) => {
      const text = extractHtml(html, 'https://rail.example/valley', 'text').content;
      for (const line of body) expect(text).toContain(line);
      expect(text).not.toContain('Bus fares frozen');
      const without = extractHtml(html, 'https://rail.example/valley', 'text', {
        rules: { ...ALL_RULES, scriptState: false },
      }).content;
      expect(without).not.toContain(body[2]);
    });

    it('a page whose html holds its article keeps it, whatever its state holds', () => {
      const own =
        '<p>The council met on Tuesday and agreed the budget for the coming year after a long debate.</p>'.repeat(
          12,
        );
      const html = pages.next.replace('<p>Loading…</p>', own);
      const text = extractHtml(html, 'https://rail.example/valley', 'text').content;
      expect(text).toContain('The council met on Tuesday');
      expect(text).not.toContain(body[0]);
    });

    it('config JSON, URL templates and hostile state are not read as an article', () => {
      const template = Array.from({ length: 40 }, (_, i) => `v${i}=\${eVar${i}}`).join('&');
      const config = `<script type="application/json">${JSON.stringify({ requests: { base: template } })}</script>`;
      const deep = `<script id="__NEXT_DATA__" type="application/json">${'['.repeat(100_000)}${']'.repeat(100_000)}</script>`;
      const unclosed = '<script id="__NEXT_DATA__" type="application/json">{"a":"'.repeat(20_000);
      const html = shell(config + deep + unclosed);
      const text = extractHtml(html, 'https://rail.example/valley', 'text').content;
      expect(text).not.toContain('eVar');
      expect(text.length).toBeLessThan(200);
    });
  });
  it('a notice hidden by its class until a script shows it is not the article', () => {
    const html = fixture('hidden-notice.html');
    const url = 'https://valle.example/puente';
    const text = extractHtml(html, url, 'text').content;
    expect(text).toContain('El puente del río Verde permanecerá cerrado');
    expect(text).toContain('pasarela provisional');
    expect(text).not.toMatch(/Noticia en desarrollo|se está actualizando/);
    const without = extractHtml(html, url, 'text', { rules: { ...ALL_RULES, hiddenNotices: false } }).content;
    expect(without).toContain('Noticia en desarrollo');
    // Hidden on one screen size only is shown on the others: it stays.
    const shown = html.replace('alert-box--developing hidden', 'alert-box--developing hidden-xs');
    expect(extractHtml(shown, url, 'text').content).toContain('Noticia en desarrollo');
  });
  it('a class that hides only a part of its block (its label, its overflow) does not count against the article', () => {
    const html = fixture('field-label-hidden.html');
    const url = 'https://zandvoorde.example/nieuws/reigerbrug';
    const lead = 'Sinds vanochtend kunnen fietsers en voetgangers de Vaart oversteken';
    for (const page of [
      html,
      html.replace(/field--label-hidden field__items/, 'overflow-hidden field__items'),
      // Hidden in a shop's quick view of the product, shown on its own page.
      html.replace(/field--label-hidden field__items/, 'quick-add-hidden field__items'),
      html.replace(/field--label-hidden field__items/, 'mobile-hidden field__items'),
    ]) {
      const text = extractHtml(page, url, 'text').content;
      expect(text).toContain(lead);
      expect(text).toContain('De brug is tachtig meter lang');
      expect(text).toContain('Bewoners die vragen hebben');
      expect(text).not.toMatch(/Blijf op de hoogte|Toegankelijkheid/);
      const without = extractHtml(page, url, 'text', { rules: { ...ALL_RULES, hiddenParts: false } }).content;
      expect(without).not.toContain(lead);
    }
  });
  it("the lead beside the page's heading, which the page states as its description, opens the article", () => {
    const html = fixture('lead-in-header.html');
    const url = 'https://talbote.example/lokales/waermenetz';
    const lead =
      'Bis 2030 sollen 4.000 Haushalte im Süden der Stadt an das Fernwärmenetz angeschlossen werden.';
    const text = extractHtml(html, url, 'text').content;
    expect(text.startsWith(lead)).toBe(true);
    expect(text.split(lead).length - 1).toBe(1);
    expect(text).toContain('Der Ausbau beginnt im Herbst');
    expect(text).not.toMatch(/Jana Keller|Impressum/);
    const without = extractHtml(html, url, 'text', { rules: { ...ALL_RULES, lead: false } }).content;
    expect(without).not.toContain(lead);
    // A lead the article already holds is not given twice.
    const inBody = html.replace(
      '<div class="m-article-body">',
      `<div class="m-article-body"><p>${lead} Die Stadtwerke rechnen mit Kosten von 60 Millionen Euro.</p>`,
    );
    expect(extractHtml(inBody, url, 'text').content.split(lead).length - 1).toBe(1);
    // An article that opens with the lead's first sentence and goes on differently still gets the lead.
    const echoed = html.replace(
      '<div class="m-article-body">',
      `<div class="m-article-body"><p>${lead} Zuerst kommt die Lindenstraße an die Reihe, danach folgen die Schulen und das Rathaus.</p>`,
    );
    expect(extractHtml(echoed, url, 'text').content).toContain(
      'Die Stadtwerke rechnen mit Kosten von 60 Millionen Euro.',
    );
    // A block the description does not state, or a second title set as a headline (no full stop), is not a lead.
    const other = html.replace(
      /<meta name="description"[^>]*>/,
      '<meta name="description" content="Alle Nachrichten aus der Stadt und dem Umland, jeden Tag neu.">',
    );
    expect(extractHtml(other, url, 'text').content).not.toContain(lead);
    const headline = html.replace(
      /angeschlossen werden\. Die Stadtwerke rechnen mit Kosten von 60 Millionen Euro\./g,
      'angeschlossen werden, die Stadtwerke rechnen mit 60 Millionen Euro',
    );
    expect(extractHtml(headline, url, 'text').content).not.toContain('Bis 2030 sollen');
  });
  it("a login's dialogs, however long, are not the page's text; a dialog that holds the page's heading is", () => {
    const html = fixture('video-with-login-dialog.html');
    const url = 'https://sender-nord.example/sport/regatta';
    const text = extractHtml(html, url, 'text').content;
    expect(text).toContain('Zum ersten Mal seit zehn Jahren segeln wieder über hundert Boote');
    expect(text).not.toMatch(/Passwort|Registrierung|E-Mail-Adresse/);
    const without = extractHtml(html, url, 'text', { rules: { ...ALL_RULES, dialogs: false } }).content;
    expect(without).toContain('Passwort vergessen?');
    // The page's heading in a dialog (an article opened over a list) keeps it.
    const opened = html.replace(
      '<p>Du erhältst in Kürze',
      '<h1>Passwort vergessen?</h1><p>Du erhältst in Kürze',
    );
    expect(extractHtml(opened, url, 'text').content).toContain('Bitte sieh auch in deinem Spam-Ordner nach.');
    // A link named for the popup it opens is text.
    const linked = html.replace(
      'über hundert Boote',
      'über hundert <a class="popup" href="/boote">Boote</a>',
    );
    expect(extractHtml(linked, url, 'text').content).toContain('über hundert Boote um den Pokal');
  });
  it("a consent box's cookie notice, however long, is not the page's text", () => {
    const cookies = ['Social Media', 'Targeting', 'Functional', 'Performance'].map(
      (kind) =>
        `<div class="ot-cat-item"><h4>${kind} Cookies</h4><p>These cookies are set by our partners to build a profile of your interests, and may track your browser across other sites. If you do not allow these cookies, you will see less relevant adverts, and some sharing tools may not work as they should on this site.</p></div>`,
    );
    const post =
      'No stream link this time. The video will go up on their channel in exactly one hour from now, and the notes follow it on the blog tomorrow morning.';
    const html = `<html><head><title>Showcase today</title></head><body><h1>Showcase today</h1><div class="msg"><p>${post}</p></div><div id="onetrust-consent-sdk"><div id="onetrust-pc-sdk"><h2>Manage Consent Preferences</h2>${cookies.join('')}</div></div></body></html>`;
    const text = extractHtml(html, 'https://boards.example/t/1', 'text').content;
    expect(text).toContain(post);
    expect(text).not.toContain('These cookies are set by our partners');
    const without = extractHtml(html, 'https://boards.example/t/1', 'text', {
      rules: { ...ALL_RULES, dialogs: false },
    }).content;
    expect(without).toContain('These cookies are set by our partners');
  });

  it('a table of names does not outscore the letter they signed; a page laid out in a table keeps its text', () => {
    const html = fixture('letter-with-signatories.html');
    const url = 'https://quarterly.example/letters/libraries';
    const letter = 'The undersigned are writers, teachers and readers';
    expect(extractHtml(html, url, 'text').content).toContain(letter);
    const without = extractHtml(html, url, 'text', { rules: { ...ALL_RULES, listCells: false } }).content;
    expect(without).not.toContain(letter);
    // The letter in a table cell of its own, as pages laid out in tables have it: its sentences score.
    const laidOut = html
      .replace('<div class="wysiwyg-content">', '<table class="layout"><tr><td>')
      .replace(/<\/p>\s*<p>/g, '<br><br>')
      .replace(/<\/?p>/g, '')
      .replace('</div>\n<div class="signatories">', '</td></tr></table>\n<div class="signatories">');
    expect(laidOut).not.toContain('<p>');
    const text = extractHtml(laidOut, url, 'text').content;
    expect(text).toContain(letter);
    expect(text).toContain('what is lost is rarely won back');
  });
  it('paragraphs set apart by single line breaks are paragraphs, and outweigh a sidebar box', () => {
    const html = fixture('line-break-paragraphs.html');
    const url = 'https://weinhandel.example/regionen/mosel';
    const text = extractHtml(html, url, 'text').content;
    expect(text).toContain('zu den steilsten Europas');
    expect(text).toMatch(/eine Neigung von mehr als 60 Prozent\.\n\nAngebaut wird/);
    expect(text).not.toContain('Wir liefern innerhalb Deutschlands');
    const without = extractHtml(html, url, 'text', {
      rules: { ...ALL_RULES, lineParagraphs: false },
    }).content;
    expect(without).toContain('Wir liefern innerhalb Deutschlands');
    // Short lines (an address, a poem) keep their single breaks.
    const lines = extractHtml(
      '<html><body><h1>Kontakt</h1><div>Weinhandel am Markt<br>Marktplatz 4<br>54470 Bernkastel-Kues</div><p>Wir sind von Montag bis Samstag für Sie da, am Samstag bis 14 Uhr, und beraten Sie gern bei der Auswahl Ihrer Weine.</p></body></html>',
      url,
      'text',
    ).content;
    expect(lines).toContain('Weinhandel am Markt\nMarktplatz 4\n54470 Bernkastel-Kues');
  });
  it("the article's opening, in a block of its own between the heading and the rest, opens the article", () => {
    const html = fixture('opening-in-own-block.html');
    const url = 'https://hilfswerk.example/presse/wetterextreme';
    const opening = 'Das Hilfswerk hat im vergangenen Jahr so vielen Menschen nach Wetterextremen geholfen';
    const text = extractHtml(html, url, 'text').content;
    expect(text.startsWith(opening)).toBe(true);
    expect(text).toContain('Die Folgen des Klimawandels, heißt es im Jahresbericht');
    expect(text).toContain('Der Verband will deshalb im kommenden Jahr');
    expect(text).not.toContain('Ein ausgetrocknetes Flussbett');
    const without = extractHtml(html, url, 'text', { rules: { ...ALL_RULES, opening: false } }).content;
    expect(without).not.toContain(opening);
    // A notice between the heading and the article is not its opening, though it is written in sentences.
    const notice = html.replace(
      '<div class="block block-entity-fieldnodebody">',
      '<div class="cookie-notice"><p>Wir verwenden Cookies, um Ihnen die bestmögliche Nutzung unserer Website zu ermöglichen. Mehr dazu in unserer Datenschutzerklärung.</p></div><div class="block block-entity-fieldnodebody">',
    );
    const noticed = extractHtml(notice, url, 'text').content;
    expect(noticed).toContain(opening);
    expect(noticed).not.toContain('Wir verwenden Cookies');
  });
  it('the rules for leads, openings, line breaks, list cells, dialogs and hidden parts stay bounded on hostile pages', () => {
    const line =
      'Eine Zeile mit genug Text, um als Absatz zu gelten, und noch etwas mehr Text dahinter, damit sie lang genug wird';
    const article = Array.from(
      { length: 8 },
      (_, i) =>
        `<p>Absatz ${i}: Die Gemeinde hat den Plan für den neuen Hafen vorgestellt, der im Frühjahr gebaut werden soll.</p>`,
    ).join('');
    const html = `<html><head><title>Der neue Hafen</title><meta name="description" content="${'Ein Satz ohne Ende '.repeat(20)}"></head><body>
      <h1>Der neue Hafen</h1>${'<span class="field--label-hidden overflow-hidden hidden-xs"></span>'.repeat(30_000)}
      <div class="lines">${`${line}<br>`.repeat(20_000)}</div>
      <table><tr>${'<td>Anna Berger, Ben Costa, Clara Dietz, David Eriksen, Elena Falk</td>'.repeat(5_000)}</tr></table>
      ${'<div class="modal">'.repeat(2_000)}Anmelden${'</div>'.repeat(2_000)}
      <article>${article}</article></body></html>`;
    const text = extractHtml(html, 'https://hafen.example/plan', 'text').content;
    expect(text).toContain('Absatz 7: Die Gemeinde hat den Plan');
    expect(text).not.toContain('Anmelden');
  });
  it("an image's own block loses a short caption not marked as one, and keeps the image", () => {
    const html = fixture('image-captions.html');
    const url = 'https://bergblatt.example/schnee';
    const text = extractHtml(html, url, 'text').content;
    expect(text).toContain('Ein kleines Team aus Geografinnen');
    expect(text).not.toMatch(/Abbildung 1|Eine Schwachschicht im Profil/);
    // An emoji or a small icon in a line of text does not make the line a caption.
    expect(text).toContain('Wir freuen uns über jede Hilfe');
    expect(text).toContain('Die Ergebnisse erscheinen einmal in der Woche.');
    const markdown = extractHtml(html, url, 'markdown').content;
    expect(markdown).toContain('![](https://bergblatt.example/bilder/karte-tal.png)');
    expect(markdown).toContain('![](https://bergblatt.example/bilder/schichten.jpg)');
    const without = extractHtml(html, url, 'text', { rules: { ...ALL_RULES, imageCaptions: false } }).content;
    expect(without).toContain('Abbildung 1: Schneehöhen im oberen Tal');
    expect(without).toContain('Eine Schwachschicht im Profil');
    // A gallery of 20,000 images around one caption is judged once, not once per image.
    const gallery = html.replace(
      '<span>Abbildung 1',
      `${'<img src="/bilder/g.png">'.repeat(20_000)}<span>Abbildung 1`,
    );
    const shown = extractHtml(gallery, url, 'markdown').content;
    expect(shown.split('bilder/g.png').length - 1).toBe(20_000);
    expect(shown).not.toContain('Abbildung 1');
  });
  it('an article split into sibling blocks between embeds is kept whole (Readability joins the siblings)', () => {
    const text = extractHtml(
      fixture('split-by-embeds.html'),
      'https://diario.example/parque-solar',
      'text',
    ).content;
    expect(text).toContain('El ayuntamiento inauguró este lunes el primer parque solar flotante');
    expect(text).toContain('los paneles reducen la evaporación del agua en verano');
    expect(text).toContain('Los ecologistas celebraron el proyecto');
    expect(text).not.toMatch(/Lo más leído|Nueva línea de tranvía/);
  });
  it('what follows the heading is found in document order, not by depth', () => {
    const { document } = parseHTML(
      '<html><body><div><div><div><p id="before">x</p></div></div></div><h1 id="h">t</h1><div id="c"><span id="s">y</span></div><div><div><p id="deep">z</p></div></div></body></html>',
    );
    const h = document.getElementById('h') as unknown as Element;
    const ids = (max: number) => (id: string) => firstWithin(h, max, (el) => el.id === id)?.id;
    expect(ids(100)('before')).toBeUndefined();
    expect(ids(100)('s')).toBe('s');
    expect(ids(100)('deep')).toBe('deep');
    // 'y' is one character of text between the heading and the deep paragraph.
    expect(ids(1)('deep')).toBeUndefined();
  });
});
