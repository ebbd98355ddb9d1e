// The command line's side of the HTTP API: where sift is, the token, one request, its errors.

/** A failure the user can act on: printed as it is, exit code 2. */
export class CliError extends Error {}

export function fail(message: string): never {
  throw new CliError(message);
}

export interface Api {
  base: string;
  headers: Record<string, string>;
}

export function api(): Api {
  const base = (process.env.SIFT_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const token = process.env.SIFT_TOKEN;
  if (!token) fail('set SIFT_TOKEN to your token (and SIFT_URL when sift is not on 127.0.0.1:8080)');
  return { base, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } };
}

/** One request to sift; a 4xx/5xx becomes a CliError quoting the error envelope. */
export async function call(
  a: Api,
  method: string,
  path: string,
  { body, accept = 'application/json' }: { body?: unknown; accept?: string } = {},
): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`${a.base}${path}`, {
      method,
      headers: { ...a.headers, accept },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
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
    fail(`${e.code ?? res.status}: ${e.message ?? res.statusText}${e.hint ? `\nhint: ${e.hint}` : ''}`);
  }
  return res;
}
