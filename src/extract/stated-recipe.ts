/**
 * The recipe or the how-to a page states in its JSON-LD (schema.org Recipe, HowTo): its
 * ingredients or supplies, and its steps. Such a page spreads them over cards and widgets apart
 * from its story (or writes them with its scripts), and the block chosen as the article often
 * holds the story alone.
 */
import { JSON_LD_DEPTH, typeOf, type Json } from './json-ld';
import { statedLines } from './stated-text';

export interface StatedRecipe {
  ingredients: string[];
  steps: string[];
}

/** How many ingredients and steps are read, and the characters of each: a page may state millions. */
const MAX_ITEMS = 200;
const MAX_ITEM_CHARS = 4000;

/** How many of them are looked for in the article, to judge whether it holds the recipe. */
const CHECKED = 20;

/** The page's first Recipe or HowTo with ingredients (supplies) or steps; undefined when none. */
export function statedRecipe(ld: Json[]): StatedRecipe | undefined {
  for (const o of ld) {
    if (!/(^|\s)(recipe|howto)(\s|$)/i.test(typeOf(o))) continue;
    const ingredients = lines(o.recipeIngredient ?? o.ingredients ?? o.supply, 0);
    const steps = lines(o.recipeInstructions ?? o.step, 0);
    if (ingredients.length > 0 || steps.length > 0) return { ingredients, steps };
  }
  return undefined;
}

/**
 * Lines of text from a string (one per line), a list, a HowToStep ({text}), or a HowToSection
 * ({itemListElement}), at most MAX_ITEMS.
 */
function lines(v: unknown, depth: number): string[] {
  const out: string[] = [];
  const walk = (x: unknown, d: number) => {
    if (out.length >= MAX_ITEMS || d > JSON_LD_DEPTH) return;
    if (typeof x === 'string') {
      for (const line of statedLines(x.slice(0, MAX_ITEM_CHARS))) if (out.length < MAX_ITEMS) out.push(line);
    } else if (Array.isArray(x)) {
      for (const y of x.slice(0, MAX_ITEMS)) walk(y, d + 1);
    } else if (x && typeof x === 'object') {
      const o = x as Json;
      if (o.itemListElement !== undefined) walk(o.itemListElement, d + 1);
      else walk(o.text ?? o.name, d + 1);
    }
  };
  walk(v, depth);
  return out;
}

/** Of `items`, those the text does not hold (whitespace collapsed, any case). */
export function missing(items: string[], text: string): string[] {
  const flat = text.replace(/\s+/g, ' ').toLowerCase();
  return items.filter((i) => !flat.includes(i.toLowerCase()));
}

/**
 * The stated recipe's ingredients (a list) and steps (a numbered list) added to the article when it
 * lacks most of them. A recipe whose card the article holds is left as it is. (A how-to is read
 * the same way: its supplies and its steps.)
 */
export function withStatedRecipe(root: Element, ld: Json[]): void {
  const recipe = statedRecipe(ld);
  if (!recipe) return;
  const text = root.textContent ?? '';
  const doc = root.ownerDocument;
  for (const [items, tag] of [
    [recipe.ingredients, 'ul'],
    [recipe.steps, 'ol'],
  ] as const) {
    // Judged on the first CHECKED items: each is searched for in the whole article.
    const checked = items.slice(0, CHECKED);
    if (checked.length === 0 || missing(checked, text).length * 2 <= checked.length) continue;
    const list = root.appendChild(doc.createElement(tag));
    for (const item of items) list.appendChild(doc.createElement('li')).textContent = item;
  }
}
