import { encodeMessage } from '../../src/mcp/json-post';

describe('MCP JSON POST: the answer as JSON', () => {
  const long = 'a "quoted" line\nwith a \\ backslash and é ☃ 𝄞\n'.repeat(200);
  const answer = (result: unknown, id: unknown = 7) => ({ jsonrpc: '2.0', id, result });

  it('a single long tool text is written with its literal kept, and reads back as the message', () => {
    const m = answer({ content: [{ type: 'text', text: long }] });
    expect(JSON.parse(encodeMessage(m))).toEqual(m);
    expect(JSON.parse(encodeMessage(m))).toEqual(m); // the kept literal
    expect(JSON.parse(encodeMessage(answer({ content: [{ type: 'text', text: long }] }, 'x')))).toEqual(
      answer({ content: [{ type: 'text', text: long }] }, 'x'),
    );
  });

  it('any other message is written whole: errors, several items, other fields, short texts, lists', () => {
    const others: unknown[] = [
      answer({ content: [{ type: 'text', text: long }], isError: true }),
      answer({
        content: [
          { type: 'text', text: long },
          { type: 'text', text: 'b' },
        ],
      }),
      answer({ content: [{ type: 'text', text: long, annotations: { audience: ['user'] } }] }),
      answer({ content: [{ type: 'text', text: 'short' }] }),
      answer({ tools: [] }),
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
      [answer({ content: [{ type: 'text', text: long }] }, 1), answer({ tools: [] }, 2)],
      { result: { content: [{ type: 'text', text: long }] } },
    ];
    for (const m of others) expect(JSON.parse(encodeMessage(m))).toEqual(m);
  });
});
