// The command line's side of the HTTP API: where sift is, the token, one request, its errors, and
// the exit codes every command ends with.
import { serverUrl } from './server-url';

/** The exit codes, as the usage text documents them. */
export const EXIT = { ok: 0, error: 1, usage: 2, partial: 3, interrupted: 130 } as const;

/** A failure the user can act on: printed as it is, with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.error,
  ) {
    super(message);
  }
}

/** The server answered an error envelope. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly hint: string | undefined,
  ) {
    super(`${code}: ${detail}${hint ? `\nhint: ${hint}` : ''}`, EXIT.error);
  }
}

/** Something went wrong: exit 1. */
export function fail(message: string): never {
  throw new CliError(message, EXIT.error);
}

/** The command line (or the environment it runs in) is wrong, nothing was sent: exit 2. */
export function usage(message: string): never {
  throw new CliError(message, EXIT.usage);
}

export interface Api {
  base: string;
  /** How `base` was chosen (see server-url.ts), when it was chosen by api(). */
  from?: string;
  headers: Record<string, string>;
}

export function api(): Api {
  const { url, from } = serverUrl();
  const token = process.env.SIFT_TOKEN;
  if (!token) usage(`set SIFT_TOKEN to your token (sift is looked for at ${url}, ${from})`);
  return {
    base: url,
    from,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  };
}

/** A connection error in words: an AggregateError (one per address tried) has no message of its own. */
export function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException & { errors?: Error[] };
  return e.message || e.errors?.[0]?.message || e.code || String(err);
}

/**
 * sift could not be reached, or cut the connection before its answer was read whole: it stopped,
 * or is not where the client looked. The message names the URL tried and how it was chosen.
 */
export class Unreachable extends CliError {
  static readonly hint = 'start sift (make run), or set SIFT_URL to the address it listens on';
  readonly detail: string;

  constructor(
    readonly a: Api,
    readonly reason: string,
  ) {
    const detail = `cannot reach sift at ${a.base}${a.from ? ` (${a.from})` : ''}: ${reason}`;
    super(`${detail}\nhint: ${Unreachable.hint}`, EXIT.error);
    this.detail = detail;
  }
}

export interface CallOptions {
  /** A JSON body. */
  body?: unknown;
  /** Or a body of bytes, of this type. */
  raw?: { bytes: Buffer; type: string };
  accept?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** An answer from sift: its status, headers and body, read once. */
export interface Reply {
  status: number;
  header(name: string): string | undefined;
  /** Text, as it comes. */
  body: AsyncIterable<string>;
  text(): Promise<string>;
  json<T>(): Promise<T>;
}

/**
 * One HTTP request with node:http. Node's global fetch would do, but loading it costs about 0.3 s
 * of CPU at every start, more than the rest of the CLI together.
 */
function request(
  a: Api,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body?: string | Buffer,
  signal?: AbortSignal,
) {
  const lib: typeof import('node:http') =
    url.protocol === 'https:' ? require('node:https') : require('node:http');
  return new Promise<Reply>((resolve, reject) => {
    const req = lib.request(url, { method, headers, signal }, (res) => {
      const text = async () => {
        let s = '';
        try {
          for await (const chunk of res) s += chunk;
        } catch (err) {
          if (signal?.aborted) throw err;
          throw new Unreachable(a, `the answer was cut off: ${reasonOf(err)}`);
        }
        return s;
      };
      res.setEncoding('utf8');
      resolve({
        status: res.statusCode ?? 0,
        header: (name) => [res.headers[name.toLowerCase()]].flat()[0],
        body: res,
        text,
        json: async <T>() => JSON.parse(await text()) as T,
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One request to sift; a 4xx/5xx becomes an ApiError quoting the error envelope. */
export async function call(
  a: Api,
  method: string,
  path: string,
  { body, raw, accept = 'application/json', headers = {}, signal }: CallOptions = {},
): Promise<Reply> {
  let res: Reply;
  const sent = raw?.bytes ?? (body === undefined ? undefined : JSON.stringify(body));
  try {
    res = await request(
      a,
      new URL(`${a.base}${path}`),
      method,
      {
        ...a.headers,
        ...headers,
        accept,
        ...(raw ? { 'content-type': raw.type } : {}),
        ...(sent === undefined ? {} : { 'content-length': String(Buffer.byteLength(sent)) }),
      },
      sent,
      signal,
    );
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new Unreachable(a, reasonOf(err));
  }
  if (res.status >= 400) {
    const text = await res.text();
    let e: { code?: string; message?: string; hint?: string } = {};
    try {
      e = (JSON.parse(text) as { error: typeof e }).error ?? {};
    } catch {
      e = { message: text.slice(0, 200) };
    }
    throw new ApiError(res.status, e.code ?? String(res.status), e.message ?? `HTTP ${res.status}`, e.hint);
  }
  return res;
}

/** GET a JSON body. */
export async function getJson<T>(a: Api, path: string, signal?: AbortSignal): Promise<T> {
  return (await call(a, 'GET', path, { signal })).json<T>();
}

/** A job id as a path segment. */
export const jobPath = (id: string) => `/v1/batch/${encodeURIComponent(id)}`;
