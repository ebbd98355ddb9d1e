import type { IncomingMessage } from 'node:http';
import { SiftError, invalidRequest } from '../common/errors';

/** A character that is not whitespace by RFC 8259. */
const NOT_SPACE = /[^ \t\n\r]/;

const notJson = () => invalidRequest('the body is not valid JSON', 'send a JSON object as the body');

const badCharset = (charset: string) =>
  new SiftError(
    415,
    'unsupported_media_type',
    `the body's charset "${charset.slice(0, 40)}" is not read`,
    'send the JSON body in UTF-8',
  );

const notJsonType = (type: string) =>
  new SiftError(
    415,
    'unsupported_media_type',
    type ? `a body of type "${type.slice(0, 60)}" is not read` : 'a body without a Content-Type is not read',
    'send the body as JSON with the header Content-Type: application/json (curl: -H "content-type: application/json")',
  );

/** The media type and charset of a Content-Type header, lower-cased: "application/json", "utf-8". */
function contentType(header: string | undefined): { type: string; charset: string } {
  if (!header) return { type: '', charset: '' };
  const semi = header.indexOf(';');
  const type = (semi < 0 ? header : header.slice(0, semi)).trim().toLowerCase();
  const charset = semi < 0 ? '' : (/;\s*charset\s*=\s*"?([^";\s]*)/i.exec(header)?.[1] ?? '').toLowerCase();
  return { type, charset };
}

/**
 * Reads a JSON request body into `req.body`, as a JSON body parser would and no more: a request
 * without a body is left unread (`req.body` stays undefined and the route's validation names what
 * is missing); a body of another media type than JSON is refused (415: its fields would otherwise
 * be reported missing, which hides the cause); a body over `limit` bytes is
 * refused by its Content-Length before a byte is read, or when the streamed bytes pass the limit
 * (the rest is discarded by the server); the body must be UTF-8 (a BOM is skipped) and hold a JSON
 * object or array; an empty body is `{}`. Calls `done` once, with a SiftError when the body is
 * refused; a request whose client goes away before the body ends never calls it.
 */
export function readJsonBody(
  req: IncomingMessage & { body?: unknown },
  limit: number,
  tooLarge: () => Error,
  done: (err?: unknown) => void,
): void {
  const length = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  const { type, charset } = contentType(req.headers['content-type']);
  const json = type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
  if (!hasBody) {
    if (length === '0' && json) req.body = {};
    return done();
  }
  if (!json) return done(notJsonType(type));
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') return done(badCharset(charset));
  if (length !== undefined && Number(length) > limit) return done(tooLarge());

  const chunks: Buffer[] = [];
  let received = 0;
  const stop = () => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) {
      stop();
      req.pause();
      done(tooLarge());
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = () => {
    stop();
    const buf = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
    let text = buf.toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.length === 0) {
      req.body = {};
      return done();
    }
    const first = NOT_SPACE.exec(text)?.[0];
    if (first !== '{' && first !== '[') return done(notJson());
    try {
      req.body = JSON.parse(text);
    } catch {
      return done(notJson());
    }
    done();
  };
  // The client went away mid-body: there is nobody to answer.
  const onError = () => stop();
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
}
