import type { Request, Response } from 'express';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { SizedLru } from '../common/sized-lru';

/** At most this many messages in one POST (the SDK's transport's limit). */
const MAX_BATCH = 100;

/**
 * Tool texts as JSON string literals: a cached page's text is the same string each time it is
 * asked for, and escaping it again is much of writing its answer.
 */
const literals = new SizedLru<string>(16 * 1024 * 1024, (l) => l.length * 2);

/** A JSON-RPC message as JSON; a tool's single text answer with its text's literal kept. */
export function encodeMessage(body: unknown): string {
  const m = body as { id?: unknown; result?: { content?: unknown; isError?: unknown } };
  const { content, ...others } = (m?.result ?? {}) as { content?: { type?: unknown; text?: unknown }[] };
  const only = content?.length === 1 ? content[0] : undefined;
  const text = only?.type === 'text' && Object.keys(only).length === 2 ? only.text : undefined;
  if (typeof text !== 'string' || text.length < 4096) return JSON.stringify(body);
  let literal = literals.get(text);
  if (literal === undefined) literals.set(text, (literal = JSON.stringify(text)));
  const rest = JSON.stringify({ ...m, result: undefined }).slice(1, -1);
  // The result's other fields (structuredContent) as they are.
  const more = JSON.stringify(others).slice(1, -1);
  return `{${rest}${rest ? ',' : ''}"result":{"content":[{"type":"text","text":${literal}}]${more ? `,${more}` : ''}}}`;
}

/**
 * Streamable HTTP's POST, stateless, answered in JSON, one POST at a time. The SDK's own transport
 * turns every request into a web Request and its answer into a web Response (through
 * @hono/node-server), and is made and closed for each POST, which costs more than the cached fetch
 * it carries (bench/adapters); this one reads the body its entrance parsed, writes one buffer,
 * and stays connected to its server for the next POST once this one is answered. Its rules are the
 * SDK transport's: Accept must list application/json and text/event-stream (406); an
 * MCP-Protocol-Version the SDK does not support is 400; each message must pass the SDK's JSON-RPC
 * schema (400, -32700); an initialize comes alone; notifications and responses alone are 202; a
 * POST's requests are answered together, one answer as an object and several as a list.
 * Notifications a tool sends while it runs have no stream to go to and are dropped, as the SDK's
 * JSON mode drops them. (The gate has already refused any body that is not application/json.)
 */
export class JsonPostTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  /** The POST being answered, its requests by id (each with its answer once sent), and what to call once it is. */
  private post?: {
    res: Response;
    answers: Map<RequestId, JSONRPCMessage | undefined>;
    answered: () => void;
  };
  private closed = false;
  /** Requests handed to the server and not yet answered, of any POST: the server is busy until none. */
  private readonly inflight = new Set<RequestId>();

  /** Whether every request the server was handed has been answered (it may serve another POST). */
  get idle(): boolean {
    return this.inflight.size === 0;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.post = undefined;
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // The server's own messages: an answer has an id and no method (a notification or a request
    // of the server's has a method, and has no stream to go to).
    if ('method' in message || !('id' in message)) return;
    const post = this.post;
    const id = message.id as RequestId;
    this.inflight.delete(id);
    // An answer whose POST has ended (its caller hung up) goes nowhere: never into another POST.
    if (!post || !post.answers.has(id) || post.answers.get(id) !== undefined) return;
    post.answers.set(id, message);
    const all = [...post.answers.values()];
    if (all.every((m) => m !== undefined)) this.write(200, all.length === 1 ? all[0] : all);
  }

  /**
   * Takes a POST (none may be in progress): answers it at once when it is refused or holds no
   * request, or when the server has answered each of its requests; then calls `answered`.
   */
  handle(req: Request, res: Response, answered: () => void): void {
    if (this.post || this.closed) throw new Error('an MCP transport took a POST while busy or closed');
    this.post = { res, answers: new Map(), answered };
    const accept = req.headers.accept ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return this.refuse(
        406,
        -32000,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      );
    }
    const body: unknown = req.body;
    const raw = Array.isArray(body) ? body : [body];
    if (raw.length > MAX_BATCH) {
      return this.refuse(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`);
    }
    const messages: JSONRPCMessage[] = [];
    for (const m of raw) {
      const parsed = JSONRPCMessageSchema.safeParse(m);
      if (!parsed.success) return this.refuse(400, -32700, 'Parse error: Invalid JSON-RPC message');
      messages.push(parsed.data);
    }
    // Each message has passed the schema: a method and an id make it a request.
    const isRequest = (m: JSONRPCMessage) => 'method' in m && 'id' in m;
    if (messages.some((m) => isRequest(m) && (m as { method: string }).method === 'initialize')) {
      if (messages.length > 1) {
        return this.refuse(400, -32600, 'Invalid Request: Only one initialization request is allowed');
      }
    } else {
      const version = req.headers['mcp-protocol-version'];
      if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        return this.refuse(
          400,
          -32000,
          `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
        );
      }
    }
    const { answers } = this.post;
    for (const m of messages) {
      if (!isRequest(m)) continue;
      const id = (m as { id: RequestId }).id;
      // Answers are matched to requests by id: two requests of one id could not be told apart.
      if (answers.has(id)) {
        answers.clear();
        return this.refuse(400, -32600, 'Invalid Request: a request id is repeated in this POST');
      }
      answers.set(id, undefined);
    }
    for (const id of answers.keys()) this.inflight.add(id);
    const hasRequests = answers.size > 0;
    const extra = { requestInfo: { headers: req.headers } };
    for (const m of messages) this.onmessage?.(m, extra);
    if (!hasRequests) this.write(202);
  }

  /**
   * The server stops: each request of the POST not answered yet is answered with a JSON-RPC error
   * saying so (503 with Retry-After when none was answered), and the POST ends. A call still
   * running goes on for nobody; its late answer is dropped.
   */
  stop(retryAfterS: number): void {
    const post = this.post;
    if (!post) return;
    const error = { code: -32000, message: `sift is stopping: send the call again in ${retryAfterS} s` };
    let answered = 0;
    for (const [id, answer] of post.answers) {
      if (answer !== undefined) answered++;
      else post.answers.set(id, { jsonrpc: '2.0', id, error });
    }
    const all = [...post.answers.values()];
    if (answered === 0 && !post.res.headersSent) post.res.setHeader('Retry-After', String(retryAfterS));
    this.write(answered === 0 ? 503 : 200, all.length === 1 ? all[0] : all);
  }

  private refuse(status: number, code: number, message: string): void {
    this.onerror?.(new Error(message));
    this.write(status, { jsonrpc: '2.0', error: { code, message }, id: null });
  }

  private write(status: number, body?: unknown): void {
    const post = this.post;
    if (!post) return;
    this.post = undefined;
    const { res } = post;
    if (!res.headersSent && !res.destroyed) {
      if (body === undefined) res.writeHead(status).end();
      else {
        const json = Buffer.from(encodeMessage(body));
        res
          .writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': json.length })
          .end(json);
      }
    }
    post.answered();
  }
}
