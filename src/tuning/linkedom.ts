import Module from 'node:module';
import * as path from 'node:path';

// Three of linkedom's costs that extraction paid for nothing, each kept to what the DOM standard
// and linkedom itself say. Imported before linkedom (the event target must be in place when it
// loads).

/**
 * linkedom's EventTarget, with each node's listener map made when a listener is first added.
 *
 * linkedom gives every node it creates (element, text, attribute, comment) a `Map` kept in a
 * `WeakMap`, in case a listener is ever added. Extraction never adds one, and a page has thousands
 * of nodes. Making the map only for a node that gets a listener took extraction from 4.4 to 3.5 ms
 * of CPU per 18 KB page, and from 27 to 18 ms per page of the article corpus, mostly in the
 * collections the weak entries cost. Listeners, removal and dispatch behave as in linkedom.
 */
const listenersOf = new WeakMap<object, Map<string, Map<Listener, unknown>>>();

type Listener = ((event: unknown) => void) | { handleEvent(event: unknown): void };

interface DomEvent {
  type: string;
  bubbles: boolean;
  defaultPrevented: boolean;
  cancelBubble: boolean;
  eventPhase: number;
  currentTarget?: unknown;
  target?: unknown;
  readonly NONE: number;
  readonly CAPTURING_PHASE: number;
  readonly AT_TARGET: number;
  readonly BUBBLING_PHASE: number;
  _path: { currentTarget: LazyEventTarget; target: LazyEventTarget }[];
  _stopImmediatePropagationFlag?: boolean;
}

function call(event: DomEvent, listener: Listener): boolean | undefined {
  if (typeof listener === 'function') listener.call(event.target, event);
  else listener.handleEvent(event);
  return event._stopImmediatePropagationFlag;
}

function invoke(
  this: DomEvent,
  { currentTarget, target }: { currentTarget: LazyEventTarget; target: LazyEventTarget },
): boolean | undefined {
  const listeners = listenersOf.get(currentTarget)?.get(this.type);
  if (!listeners) return undefined;
  this.eventPhase = currentTarget === target ? this.AT_TARGET : this.BUBBLING_PHASE;
  this.currentTarget = currentTarget;
  this.target = target;
  for (const [listener, options] of listeners) {
    if ((options as { once?: boolean } | undefined)?.once) listeners.delete(listener);
    if (call(this, listener)) break;
  }
  delete this.currentTarget;
  delete this.target;
  return this.cancelBubble;
}

export class LazyEventTarget {
  /** @protected (linkedom's nodes return their parent, for bubbling) */
  _getParent(): LazyEventTarget | null {
    return null;
  }

  addEventListener(type: string, listener: Listener, options?: unknown): void {
    let byType = listenersOf.get(this);
    if (!byType) listenersOf.set(this, (byType = new Map()));
    let listeners = byType.get(type);
    if (!listeners) byType.set(type, (listeners = new Map()));
    listeners.set(listener, options);
  }

  removeEventListener(type: string, listener: Listener): void {
    const byType = listenersOf.get(this);
    const listeners = byType?.get(type);
    if (listeners?.delete(listener) && listeners.size === 0) byType!.delete(type);
  }

  dispatchEvent(event: DomEvent): boolean {
    // As linkedom does it: the path is the target and, for a bubbling event, its ancestors.
    event.eventPhase = event.CAPTURING_PHASE;
    event._path.push({ currentTarget: this, target: this });
    for (let node = event.bubbles ? this._getParent() : null; node; node = node._getParent()) {
      if ((node as Partial<LazyEventTarget>).dispatchEvent)
        event._path.push({ currentTarget: node, target: this });
    }
    event._path.some(invoke, event);
    event._path = [];
    event.eventPhase = event.NONE;
    return !event.defaultPrevented;
  }
}

/**
 * Makes linkedom build its nodes on LazyEventTarget: its event-target module is put in Node's
 * module cache before linkedom loads it. Does nothing once linkedom is loaded (its classes are
 * made by then), or when its files are not where this version keeps them. Returns whether
 * linkedom's nodes will use LazyEventTarget.
 */
export function useLazyEventTarget(): boolean {
  let index: string;
  try {
    index = require.resolve('linkedom');
  } catch {
    return false;
  }
  const file = path.join(path.dirname(index), 'interface', 'event-target.js');
  const cache = require.cache;
  if (cache[file]?.exports?.EventTarget === LazyEventTarget) return true;
  if (cache[index] || cache[file]) return false;
  const seeded = new Module(file, module);
  seeded.filename = file;
  seeded.loaded = true;
  seeded.exports = { EventTarget: LazyEventTarget };
  cache[file] = seeded;
  return true;
}

useLazyEventTarget();

interface ElementClass {
  prototype: { getAttributeNode(name: string): { value: string } | null };
}

/**
 * Element.className (and getAttribute('class'), which linkedom answers with it) read from the
 * class attribute. linkedom builds a DOMTokenList (a Set of the tokens) for any element whose
 * class is read, with or without a class, and joins the tokens again at each read: the cleaning
 * rules, the metadata and Readability read the class of most elements: reading the attribute
 * instead took extraction from 18.0 to 15.4 ms of CPU per page of the article corpus. linkedom keeps the attribute equal to the token
 * list's value (it writes the list back at every change), so the answer is the same; setting the
 * class is left as it is.
 */
export function readClassFromAttribute(element: ElementClass): void {
  const own = Object.getOwnPropertyDescriptor(element.prototype, 'className');
  if (!own?.get || !own.set) return;
  Object.defineProperty(element.prototype, 'className', {
    configurable: true,
    enumerable: own.enumerable,
    set: own.set,
    get(this: ElementClass['prototype']): string {
      const attribute = this.getAttributeNode('class');
      return attribute === null ? '' : attribute.value;
    },
  });
}

/** linkedom's keys for the next node in its list and an element's end marker (see listedElements). */
const LIST_KEYS = listKeys();

function listKeys(): { next: symbol; end: symbol } | undefined {
  try {
    const file = path.join(path.dirname(require.resolve('linkedom')), 'shared', 'symbols.js');
    const { NEXT, END } = require(file) as { NEXT?: unknown; END?: unknown };
    return typeof NEXT === 'symbol' && typeof END === 'symbol' ? { next: NEXT, end: END } : undefined;
  } catch {
    return undefined;
  }
}

/** Whether listedElements reads linkedom's list (its keys are where this version keeps them). */
export const readsLinkedomList = LIST_KEYS !== undefined;

interface Listed {
  nodeType: number;
  localName?: string;
  [key: symbol]: Listed | undefined;
}

/**
 * The elements under `root` whose tag is in `wanted` (lower case), in document order, none inside
 * a <template>; undefined when `root` is not linkedom's. linkedom keeps a document as one list,
 * each element followed by its attributes, its children and its end marker: read along it, not
 * through the firstElementChild and nextElementSibling getters, which walk it again at each step
 * (Readability asks for such lists at most of its steps: 8 % of an extraction's CPU on an 18 KB
 * article).
 */
export function listedElements(root: object, wanted: ReadonlySet<string>): object[] | undefined {
  const keys = LIST_KEYS;
  const end = keys && (root as Listed)[keys.end];
  if (!keys || !end) return undefined;
  const out: object[] = [];
  let node = (root as Listed)[keys.next];
  while (node && node !== end) {
    if (node.nodeType === 1) {
      if (wanted.has(node.localName!)) out.push(node);
      // A template's children are its content's, which a document's lists leave out.
      if (node.localName === 'template') node = node[keys.end] ?? node;
    }
    node = node[keys.next];
  }
  return out;
}
