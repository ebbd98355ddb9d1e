import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { FLEET_TOKEN } from '../support/app';
import type { Fixture } from '../support/fixture';
import { PAGE_A, startFirecrawlSite } from '../support/firecrawl-site';
import { node24 } from '../support/node24';
import { wordFile } from '../support/office-files';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** Where the pinned clients are installed (test/clients, by `make clients`). */
const CLIENTS = path.join(__dirname, '../clients');

type Settled = Record<string, { ok?: any; error?: { message: string; status?: number } }>;

/**
 * Clients of Firecrawl's API written by others, pinned and unchanged, given sift's …/firecrawl as
 * their API URL: the SDK's 1.x line and LangChain's FireCrawlLoader on it (Firecrawl's v1 API),
 * and Firecrawl's own MCP server (its v2 API) driven by an MCP client.
 */
describe("Firecrawl's clients against sift's /firecrawl", () => {
  let app: INestApplication;
  let fixture: Fixture;
  let base: string;
  let site: string;

  beforeAll(async () => {
    ({ app, fixture, base } = await startFirecrawlSite());
    site = `http://127.0.0.1:${fixture.port}`;
  });

  afterAll(async () => {
    await app?.close();
    await fixture?.stop();
  });

  it("the SDK's 1.x line and LangChain's FireCrawlLoader: scrape, crawl, map and batch scrape in v1's shapes", async () => {
    const out = await new Promise<Settled>((resolve, reject) =>
      execFile(
        process.execPath,
        [path.join(CLIENTS, 'firecrawl-v1-clients.js'), `${base}/firecrawl`, FLEET_TOKEN, site],
        { cwd: CLIENTS, timeout: 120_000 },
        (err, stdout, stderr) =>
          err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
      ),
    );
    for (const call of [
      'scrape',
      'crawl',
      'subPath',
      'backward',
      'map',
      'batch',
      'loaderScrape',
      'loaderCrawl',
      'loaderMap',
      'llmstxt',
      'llmstxtShort',
    ])
      expect({ call, error: out[call]?.error }).toEqual({ call, error: undefined });

    // Firecrawl's v1 llms.txt generator: sift's llms.txt job, its files in Firecrawl's answer (the
    // site's own llms.txt is not read, as the crawls above do not read it).
    expect(out.llmstxt.ok).toMatchObject({ success: true, status: 'completed' });
    const { llmstxt, llmsfulltxt } = out.llmstxt.ok.data;
    expect(llmstxt.split('\n')[0]).toBe('# Home');
    for (const [p, title] of [
      ['/', 'Home'],
      ['/a', 'Page A'],
      ['/b', 'Page B'],
    ])
      expect(llmstxt).toContain(`- [${title}](${site}${p}): `);
    expect(llmstxt).not.toContain('/docs/');
    expect(llmsfulltxt).toContain(`\n# Page A\n\nSource: ${site}/a\n\n`);
    expect(llmsfulltxt).toContain('Paragraph 0 of the article about apples');
    // Without showFullText, the list alone; maxUrls is the crawl's limit.
    const short = out.llmstxtShort.ok.data;
    expect(short.llmsfulltxt).toBeUndefined();
    expect(short.llmstxt.split('\n').filter((l: string) => l.startsWith('- ['))).toHaveLength(2);

    const doc = out.scrape.ok;
    expect(doc.success).toBe(true);
    expect(doc.markdown).toContain('Paragraph 0 of the article about apples');
    expect(doc.rawHtml).toBe(PAGE_A);
    // The whole page's links, each once, in order.
    const hrefs = [...PAGE_A.matchAll(/href="([^"]+)"/g)].map((m) => new URL(m[1], site).href);
    expect(doc.links).toEqual([...new Set(hrefs)]);
    expect(doc.links).toEqual(expect.arrayContaining([`${site}/a`, `${site}/b`]));
    expect(doc.metadata).toMatchObject({ title: 'Page A', sourceURL: `${site}/a`, statusCode: 200 });

    const urls = (r: any) => r.data.map((d: any) => d.metadata.sourceURL).sort();
    expect(out.crawl.ok).toMatchObject({ success: true, status: 'completed', total: 3, completed: 3 });
    expect(urls(out.crawl.ok)).toEqual([`${site}/`, `${site}/a`, `${site}/b`]);
    // From a sub-path: that path and below; allowBackwardLinks (v1's crawlEntireDomain) lifts that.
    expect(urls(out.subPath.ok)).toEqual([
      `${site}/docs/guide/`,
      `${site}/docs/guide/one`,
      `${site}/docs/guide/two/`,
    ]);
    expect(urls(out.backward.ok)).toEqual(
      expect.arrayContaining([`${site}/`, `${site}/docs/`, `${site}/docs/api/`]),
    );
    // v1's map lists URLs, not objects.
    expect(out.map.ok).toEqual({ success: true, links: [`${site}/`, `${site}/a`, `${site}/b`] });
    // A batch scrape, followed as v1 clients follow it: at its crawl's route.
    expect(out.batch.ok).toMatchObject({ success: true, status: 'completed', total: 2, completed: 2 });
    expect(urls(out.batch.ok)).toEqual([`${site}/a`, `${site}/b`]);

    // What sift does not do is 400 naming it.
    expect(out.maxDepth.error).toMatchObject({ status: 400 });
    expect(out.maxDepth.error!.message).toContain('maxDepth');
    expect(out.search.error).toMatchObject({ status: 400 });
    expect(out.search.error!.message).toContain('/firecrawl/v1/search is not supported');

    // LangChain's documents: the page's markdown and metadata; a map's URLs as JSON strings.
    expect(out.loaderScrape.ok).toHaveLength(1);
    expect(out.loaderScrape.ok[0].pageContent).toBe(doc.markdown);
    expect(out.loaderScrape.ok[0].metadata.sourceURL).toBe(`${site}/a`);
    expect(out.loaderCrawl.ok.map((d: any) => d.metadata.sourceURL).sort()).toEqual([
      `${site}/`,
      `${site}/a`,
      `${site}/b`,
    ]);
    expect(out.loaderCrawl.ok.every((d: any) => d.pageContent.length > 100)).toBe(true);
    expect(out.loaderMap.ok.map((d: any) => JSON.parse(d.pageContent))).toEqual([
      `${site}/`,
      `${site}/a`,
      `${site}/b`,
    ]);
  }, 150_000);

  it("Firecrawl's MCP server, FIRECRAWL_API_URL at sift: its tools list, and scrape, map, crawl and status answer", async () => {
    const transport = new StdioClientTransport({
      command: node24(),
      args: [path.join(CLIENTS, 'node_modules/firecrawl-mcp/dist/index.js')],
      env: {
        PATH: process.env.PATH ?? '',
        FIRECRAWL_API_URL: `${base}/firecrawl`,
        FIRECRAWL_API_KEY: FLEET_TOKEN,
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'sift-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'firecrawl_scrape',
          'firecrawl_map',
          'firecrawl_crawl',
          'firecrawl_check_crawl_status',
        ]),
      );
      const json = (r: any) => {
        expect(r.isError ?? false).toBe(false);
        return JSON.parse(r.content[0].text);
      };
      const scraped = json(
        await client.callTool({
          name: 'firecrawl_scrape',
          arguments: { url: `${site}/a`, formats: ['markdown'] },
        }),
      );
      expect(scraped.markdown).toContain('Paragraph 0 of the article about apples');
      const mapped = json(
        await client.callTool({ name: 'firecrawl_map', arguments: { url: `${site}/`, sitemap: 'skip' } }),
      );
      expect(mapped.links.map((l: any) => l.url).sort()).toEqual([`${site}/`, `${site}/a`, `${site}/b`]);
      const crawled = json(
        await client.callTool(
          { name: 'firecrawl_crawl', arguments: { url: `${site}/`, limit: 3, sitemap: 'skip' } },
          undefined,
          { timeout: 60_000 },
        ),
      );
      expect(crawled).toMatchObject({ status: 'completed', total: 3, completed: 3 });
      const id = crawled.id ?? crawled.jobId;
      expect(typeof id).toBe('string');
      const status = json(await client.callTool({ name: 'firecrawl_check_crawl_status', arguments: { id } }));
      expect(status).toMatchObject({ status: 'completed', total: 3, completed: 3 });
      expect(status.data.map((d: any) => d.metadata.sourceURL).sort()).toEqual([
        `${site}/`,
        `${site}/a`,
        `${site}/b`,
      ]);
    } finally {
      await client.close();
    }
  }, 150_000);

  it("the SDK's parse (v2): a Word file sent as multipart comes back as its document", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-parse-')), 'report.docx');
    fs.writeFileSync(file, await wordFile());
    const out = await new Promise<{ ok?: any; error?: { message: string } }>((resolve, reject) =>
      execFile(
        node24(),
        [
          path.join(CLIENTS, 'firecrawl-v2-parse.js'),
          `${base}/firecrawl`,
          FLEET_TOKEN,
          file,
          'report.docx',
          DOCX,
        ],
        { timeout: 60_000 },
        (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout))),
      ),
    );
    expect(out.error).toBeUndefined();
    expect(out.ok.markdown).toContain('# Field Report');
    expect(out.ok.markdown).toContain('| North and South |  | Merged down |');
    expect(out.ok.html).toContain('<h3>Sampling</h3>');
    expect(out.ok.metadata).toMatchObject({ title: 'Quarterly Field Report', statusCode: 200 });
  }, 90_000);
});
