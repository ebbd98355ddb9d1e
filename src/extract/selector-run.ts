/**
 * A caller's selectors run on a page under one deadline for all of that page's selector work. The
 * engine (css-select, as linkedom's querySelectorAll runs it) cannot be interrupted, so it is
 * given a DOM adapter that counts its steps and, every so many, looks at the clock: past the
 * deadline the step throws, and the page fails with `selector_too_costly` instead of holding its
 * worker for the extraction's whole time limit (20 s), as `b ~ * ~ *` on 600 siblings did.
 */
import { compile, type Options } from 'css-select';

/** Time a page's selectors may take in all. A selector on an ordinary page takes milliseconds. */
export const SELECTOR_BUDGET_MS = 1000;

/** Steps of the engine between two looks at the clock. */
const STEPS_PER_CHECK = 1024;

/** The page's selector work went past its deadline (see SelectorRun). */
export class SelectorTooCostly extends Error {
  readonly code = 'selector_too_costly';
}

type Adapter = NonNullable<Options<Node, Element>['adapter']>;

const ELEMENT = 1;
const TEXT = 3;
const isTag = (node: Node): node is Element => node.nodeType === ELEMENT;

/** The selector work of one page: each query spends from one budget. */
export class SelectorRun {
  private steps = 0;
  private deadline = Infinity;
  private spentMs = 0;
  private readonly adapter: Adapter;

  constructor(private readonly budgetMs = SELECTOR_BUDGET_MS) {
    // linkedom's own adapter (not exported) read through the DOM's public interface, each step counted.
    const step = () => this.step();
    const getChildren = (node: Node) => (step(), node.childNodes as unknown as Node[]);
    const findAll = (test: (el: Element) => boolean, nodes: Node[]): Element[] => {
      const out: Element[] = [];
      for (const node of nodes) {
        step();
        if (!isTag(node)) continue;
        if (test(node)) out.push(node);
        out.push(...findAll(test, getChildren(node)));
      }
      return out;
    };
    const findOne = (test: (el: Element) => boolean, nodes: Node[]): Element | null => {
      for (const node of nodes) {
        step();
        if (!isTag(node)) continue;
        const found = test(node) ? node : findOne(test, getChildren(node));
        if (found) return found;
      }
      return null;
    };
    const getText = (node: Node | Node[]): string => {
      step();
      if (Array.isArray(node)) return node.map(getText).join('');
      if (isTag(node)) return getText(getChildren(node));
      return node.nodeType === TEXT ? ((node as Text).data ?? '') : '';
    };
    this.adapter = {
      isTag: (node): node is Element => (step(), isTag(node)),
      existsOne: (test, nodes) => findOne(test, nodes) !== null,
      getAttributeValue: (el, name) => (step(), el.getAttribute(name) ?? undefined),
      getChildren,
      getName: (el) => (step(), el.localName.toLowerCase()),
      getParent: (node) => (step(), node.parentNode),
      getSiblings: (node) => (step(), node.parentNode ? getChildren(node.parentNode) : [node]),
      getText,
      hasAttrib: (el, name) => (step(), el.hasAttribute(name)),
      removeSubsets: (nodes) =>
        nodes.filter((n, i) => nodes.indexOf(n) === i && !nodes.some((o) => o !== n && o.contains(n))),
      findAll,
      findOne,
    };
  }

  private step(): undefined {
    if (++this.steps % STEPS_PER_CHECK === 0 && performance.now() > this.deadline) {
      throw new SelectorTooCostly(
        `the selectors took over ${this.budgetMs} ms on this page (the limit for a page's selectors)`,
      );
    }
    return undefined;
  }

  /**
   * The elements under `root` that match any of `selectors`, in document order, each once: what
   * `root.querySelectorAll(selectors.join(','))` gives (a template's content is not searched).
   */
  all(root: ParentNode, selectors: string[]): Element[] {
    const query = selectors.join(',');
    const started = performance.now();
    this.deadline = started + this.budgetMs - this.spentMs;
    try {
      const test = compile<Node, Element>(query, {
        adapter: this.adapter,
        xmlMode: false,
        context: query.includes(':scope') ? (root as unknown as Node) : undefined,
      });
      const out: Element[] = [];
      for (let el = root.firstElementChild; el; el = this.next(el, root)) {
        this.step();
        if (test(el)) out.push(el);
      }
      return out;
    } finally {
      this.spentMs += performance.now() - started;
    }
  }

  /** The element after `el` in document order, inside `root`; a template's content is skipped. */
  private next(el: Element, root: ParentNode): Element | null {
    const child = el.localName === 'template' ? null : el.firstElementChild;
    if (child) return child;
    for (let n: Element | null = el; n && n !== root; n = n.parentNode as Element | null) {
      if (n.nextElementSibling) return n.nextElementSibling;
    }
    return null;
  }
}
