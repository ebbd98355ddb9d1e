import { boundResults, pageOfContent } from '../../src/mcp/tools';
import { fileOf } from '../../src/mcp/parse-args';

describe('MCP tool bounds', () => {
  it('a content page never ends between a surrogate pair, and the pages join to the whole', () => {
    const content = 'ab🦊cd🦊'.repeat(7);
    for (const max of [2, 3, 4, 5]) {
      const parts: string[] = [];
      let offset: number | null = 0;
      while (offset !== null) {
        const p: { content: string; next_offset: number | null } = pageOfContent({ content }, offset, max);
        expect(p.content.length).toBeLessThanOrEqual(max);
        expect(/[\uD800-\uDBFF]$/.test(p.content)).toBe(false);
        parts.push(p.content);
        offset = p.next_offset;
      }
      expect(parts.join('')).toBe(content);
    }
  });

  it('batch_results keeps a page under its character budget and continues from the last kept idx', () => {
    const r = (idx: number, n: number) => ({ idx, status: 'done', result: { content: 'x'.repeat(n) } });
    const page = boundResults({ results: [r(0, 30_000), r(1, 30_000), r(2, 30_000)], next: null }, 80_000);
    expect([page.results.map((x) => x.idx), page.next]).toEqual([[0, 1], 1]);
    const big = boundResults({ results: [r(5, 200_000), r(6, 10)], next: 9 }, 80_000);
    expect(big.results).toHaveLength(1);
    expect(JSON.stringify(big.results).length).toBeLessThanOrEqual(80_000);
    expect([big.results[0].content_truncated, big.next]).toEqual([true, 5]);
  });
});

describe("the parse tool's file", () => {
  const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919) % 256));
  const refusal = (data: string) => {
    try {
      fileOf({ data });
    } catch (err) {
      return (err as { code: string; message: string }).message;
    }
    return 'taken';
  };

  it('takes base64 in either alphabet, with or without padding and line breaks', () => {
    const std = bytes.toString('base64');
    expect(std).toMatch(/[+/]/);
    expect(bytes.toString('base64url')).toMatch(/[-_]/);
    for (const data of [
      std,
      bytes.toString('base64url'),
      std.replace(/=+$/, ''),
      std.replace(/.{76}/g, '$&\r\n'),
      ` ${std.replace(/.{64}/g, '$&\n')}\n`,
    ]) {
      expect(fileOf({ data }).bytes.equals(bytes)).toBe(true);
    }
    expect(fileOf({ data: 'aGk', filename: 'a.txt' })).toEqual({
      bytes: Buffer.from('hi'),
      contentType: 'application/octet-stream',
      name: 'a.txt',
    });
  });

  it('refuses what is not base64, and an empty file', () => {
    for (const data of ['not base64!', 'aGk=aGk=', 'aGkhx', 'aGk\u00e9', 'aG=k', 'AAAAA']) {
      expect([data, refusal(data)]).toEqual([data, 'data: not base64']);
    }
    for (const data of ['', ' \n ', '=='])
      expect([data, refusal(data)]).toEqual([data, 'data: the file is empty']);
  });
});
