/** A Firecrawl field sift cannot honour: answered 400 `{success: false, error}` naming it. */
export class FirecrawlUnsupported extends Error {
  constructor(
    readonly field: string,
    why = 'is not supported by this server',
  ) {
    super(`${field} ${why}`);
  }
}
