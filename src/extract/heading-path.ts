/**
 * Before Readability: the blocks that hold the page's heading are not furniture, whatever their
 * names say. Readability drops an element whose class or id sounds unlikely ("footer", "social",
 * "header") or whose role is a menu or a dialog, with all it holds: a theme that wraps the whole
 * page in `<div class="above-footer">` loses its article that way.
 */
import { Readability } from '@mozilla/readability';
import { unlikelyPatterns } from '../tuning/readability';
import { classId, textAtLeast, textUpTo } from './dom-measure';

/** Text a block must hold to be a wrapper of the page, not the heading's own header. */
const WRAPPER_CHARS = 1000;

// Readability's own patterns, read from it, so the two cannot drift apart.
const { unlikely: UNLIKELY, maybe: MAYBE, roles: UNLIKELY_ROLES } = unlikelyPatterns(Readability);

/** The heading's ancestors that Readability would drop as unlikely lose the names or role that say so. */
export function keepHeadingPath(heading: Element | undefined): void {
  for (let el = heading?.parentElement; el && !/^(BODY|HTML)$/.test(el.tagName); el = el.parentElement) {
    const names = classId(el);
    const unlikely = UNLIKELY.test(names) && !MAYBE.test(names);
    const role = UNLIKELY_ROLES.includes(el.getAttribute('role') ?? '');
    // The heading's own header (its title, byline and date) may go as Readability sees fit.
    if ((!unlikely && !role) || !textAtLeast(el, WRAPPER_CHARS)) continue;
    if (unlikely) {
      el.removeAttribute('class');
      el.removeAttribute('id');
    }
    if (role) el.removeAttribute('role');
  }
}

/**
 * A block Readability would drop as unlikely that holds half the page's text or more (a frame named
 * `with_header`, `sidebar-layout`) loses the names that say so: it is the page, not its furniture.
 * A block too small for that holds nothing that is not (`named` is in document order).
 */
export function keepFrames(named: Element[], body: Element | null): void {
  if (!body) return;
  let small: Element | undefined;
  for (const el of named) {
    if (el === body || small?.contains(el)) continue;
    const names = classId(el);
    if (!UNLIKELY.test(names) || MAYBE.test(names)) continue;
    // Half the page: the page holds no more than twice its text (counted no further than that).
    const chars = textUpTo(el);
    if (chars >= WRAPPER_CHARS && textUpTo(body, 2 * chars + 1) <= 2 * chars) {
      el.removeAttribute('class');
      el.removeAttribute('id');
    } else small = el;
  }
}
