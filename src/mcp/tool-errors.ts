// A tool's error answer. Loads no server code (`sift mcp` loads it too).

/** What a tool answers: its text, and its structured answer (or that it is an error). */
export type ToolResult = {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/**
 * A sift error (SiftError, or the REST API's error envelope) as the tool's answer: `isError` and
 * `{code, message, hint}`, never a protocol error. Any other fault is told by its code only
 * (internal, or extraction_failed); its details go to `onFault` (the log). SiftError is recognised
 * by its shape: importing it would load the server's error table into `sift mcp`. A refusal names
 * the fields by `names` (the tool's names for sift's).
 */
export function errorResult(
  err: unknown,
  onFault?: (err: unknown) => void,
  names: [RegExp, string][] = [],
): ToolResult {
  let body: { code: string; message: string; hint: string };
  if (isSiftError(err)) {
    let message = err.message;
    if (err.code === 'invalid_request') for (const [re, to] of names) message = message.replace(re, to);
    body = { code: err.code, message, hint: err.hint };
  } else {
    onFault?.(err);
    const code =
      (err as { code?: unknown } | null)?.code === 'extraction_failed' ? 'extraction_failed' : 'internal';
    body = {
      code,
      message: 'sift failed on this call; the details are in its log',
      hint: 'try again, or report it',
    };
  }
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}

function isSiftError(e: unknown): e is { code: string; message: string; hint: string } {
  const f = e as { code?: unknown; message?: unknown; hint?: unknown } | null;
  return typeof f?.code === 'string' && typeof f?.message === 'string' && typeof f?.hint === 'string';
}
