// `sift fetch URL`: one page, its content on stdout, what it is on stderr.
import { parse } from './args';
import { api, ApiError, call, EXIT, usage, type Reply } from './client';
import { FETCH_FLAGS, fetchOptions, inFlags } from './fetch-options';

interface Envelope {
  content?: string;
  title?: string;
  status: number;
  verdict?: string;
  truncated?: boolean;
  links?: { url: string; text: string }[];
}

export async function fetchCmd(args: string[]): Promise<void> {
  const { positionals, values } = parse('fetch', args, { ...FETCH_FLAGS, json: { type: 'boolean' } });
  const url = positionals[0];
  if (!url) usage('fetch needs a URL: sift fetch URL [options]; see sift help');
  const body = { url, ...fetchOptions(values) };
  let res: Reply;
  try {
    res = await call(api(), 'POST', '/v1/fetch', { body });
  } catch (err) {
    if (err instanceof ApiError) throw new ApiError(err.status, err.code, inFlags(err.detail), err.hint);
    throw err;
  }
  printEnvelope(await res.text(), url, values);
}

/**
 * A fetch's envelope as fetch and parse print it: the content on stdout (the whole envelope as
 * JSON with --json or --formats), what it is on stderr; exit code 1 when it is not the page asked for.
 */
export function printEnvelope(
  text: string,
  label: string,
  values: { json?: boolean; formats?: string },
): void {
  const env = JSON.parse(text) as Envelope;
  const note = env.truncated ? ', truncated' : '';
  console.error(
    `# ${env.title || label} (HTTP ${env.status}${note}${env.verdict ? `, ${env.verdict}` : ''})`,
  );
  if (values.json || values.formats) {
    // Several formats, or the envelope asked for: the JSON as the server sent it.
    process.stdout.write(`${text}\n`);
  } else {
    process.stdout.write(`${env.content ?? ''}\n`);
    if (env.links) {
      process.stdout.write(`\nlinks (${env.links.length}):\n`);
      for (const l of env.links) process.stdout.write(`${l.url}${l.text ? `\t${l.text}` : ''}\n`);
    }
  }
  // The page is printed whatever it is; the exit code says whether it is the page that was asked for.
  if (env.status >= 400 || (env.verdict !== undefined && env.verdict !== 'ok')) {
    const why = env.status >= 400 ? `the site answered HTTP ${env.status}` : `the page is ${env.verdict}`;
    console.error(`sift: ${why} (verdict ${env.verdict ?? 'none'}); printed what it sent, exit code 1`);
    process.exitCode = EXIT.error;
  }
}
