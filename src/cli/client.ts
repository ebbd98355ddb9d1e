// The command line's side of the HTTP API: where sift is, the token, one request, its errors, and
// the exit codes every command ends with.

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
  headers: Record<string, string>;
}

export function api(): Api {
  const base = (process.env.SIFT_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const token = process.env.SIFT_TOKEN;
  if (!token) usage('set SIFT_TOKEN to your token (and SIFT_URL when sift is not on 127.0.0.1:8080)');
  return { base, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } };
}

export interface CallOptions {
  body?: unknown;
  accept?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** One request to sift; a 4xx/5xx becomes an ApiError quoting the error envelope. */
export async function call(
  a: Api,
  method: string,
  path: string,
  { body, accept = 'application/json', headers = {}, signal }: CallOptions = {},
): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`${a.base}${path}`, {
      method,
      headers: { ...a.headers, ...headers, accept },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    fail(
      `cannot reach sift at ${a.base}: ${((err as Error).cause as Error)?.message ?? (err as Error).message}`,
    );
  }
  if (res.status >= 400) {
    const text = await res.text();
    let e: { code?: string; message?: string; hint?: string } = {};
    try {
      e = (JSON.parse(text) as { error: typeof e }).error ?? {};
    } catch {
      e = { message: text.slice(0, 200) };
    }
    throw new ApiError(res.status, e.code ?? String(res.status), e.message ?? res.statusText, e.hint);
  }
  return res;
}

/** GET a JSON body. */
export async function getJson<T>(a: Api, path: string, signal?: AbortSignal): Promise<T> {
  return (await (await call(a, 'GET', path, { signal })).json()) as T;
}

/** A job id as a path segment. */
export const jobPath = (id: string) => `/v1/batch/${encodeURIComponent(id)}`;
