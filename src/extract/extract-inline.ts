import { InternalFault, SiftError } from '../common/errors';
import type { ExtractOptions, Extraction, Format } from './extract';
import { NO_METADATA } from './metadata';
import type { SelectorTooCostly } from './selector-run';

/** A page's selector work went past its deadline (see selector-run.ts). */
export const selectorTooCostly = (message: string) =>
  new SiftError(
    422,
    'selector_too_costly',
    message,
    'use simpler selectors (fewer "~" combinators, no nested :has or :not), or leave them out for this page',
  );

/**
 * Extraction on this thread (a pool of size 0): `module`'s extractHtml, or with `article` its
 * writeArticle over cached article html, failing as a worker's page would.
 */
export function extractInline(
  module: string,
  html: string,
  url: string,
  format: Format,
  opts: { extract?: ExtractOptions; article?: boolean },
): Promise<Extraction> {
  return Promise.resolve()
    .then(() => {
      const x = require(module) as typeof import('./extract');
      if (!opts.article) return x.extractHtml(html, url, format, opts.extract);
      const contents = x.writeArticle(html, opts.extract?.formats ?? []);
      return { title: '', content: '', contents, metadata: NO_METADATA };
    })
    .catch((err: Error) => {
      if ((err as SelectorTooCostly).code === 'selector_too_costly') throw selectorTooCostly(err.message);
      throw new InternalFault('extraction_failed', `extraction threw on ${url}: ${err.stack ?? err.message}`);
    });
}
