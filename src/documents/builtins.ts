/**
 * JavaScript's own functions, kept from polyfills. pdf.js's legacy build (the one that runs on
 * Node 20) carries polyfills that replace some of them even where the engine has them: on Node 20
 * `Array.prototype.push`, `JSON.parse`, `JSON.stringify` and `Function.prototype.toString`. A
 * replaced `push` is a JavaScript function that every push in the process then calls, the
 * Office readers' and the XML parser's included; they read a document 15–35 % slower for it
 * (bench/office). The engine's own do everything pdf.js asks of them. What the polyfills add
 * where the engine has nothing (`Promise.withResolvers` on Node 20, say) is left to pdf.js.
 */

type Descriptors = [object, PropertyKey, PropertyDescriptor][];

const nativeSource = Function.prototype.toString;
const isNative = (f: unknown): boolean => {
  if (typeof f !== 'function') return false;
  try {
    return nativeSource.call(f).endsWith('{ [native code] }');
  } catch {
    return false;
  }
};

/** The global objects and classes (as data properties: Node's lazy globals are left alone), with their prototypes. */
function intrinsics(): object[] {
  const out = new Set<object>();
  const add = (o: unknown) => {
    if ((typeof o === 'object' && o !== null) || typeof o === 'function') out.add(o);
  };
  for (const key of Reflect.ownKeys(globalThis)) {
    const d = Object.getOwnPropertyDescriptor(globalThis, key);
    if (!d || !('value' in d) || d.value === globalThis) continue;
    add(d.value);
    if (typeof d.value === 'function') add((d.value as { prototype?: unknown }).prototype);
  }
  const typedArray = Object.getPrototypeOf(Uint8Array) as { prototype: object };
  add(typedArray);
  add(typedArray.prototype);
  add(Object.getPrototypeOf([][Symbol.iterator]()));
  return [...out];
}

/** Each native function (value, getter or setter) the intrinsics hold now, where it is held. */
function nativesNow(): Descriptors {
  const found: Descriptors = [];
  for (const o of intrinsics()) {
    for (const key of Reflect.ownKeys(o)) {
      const d = Object.getOwnPropertyDescriptor(o, key);
      if (d && (isNative(d.value) || isNative(d.get) || isNative(d.set))) found.push([o, key, d]);
    }
  }
  return found;
}

/**
 * Notes the engine's own functions; the function returned puts back each of them that was
 * replaced since (and leaves what was added). Its count: how many it put back.
 */
export function keepBuiltins(): () => number {
  const kept = nativesNow();
  return () => {
    let restored = 0;
    for (const [o, key, d] of kept) {
      const now = Object.getOwnPropertyDescriptor(o, key);
      if (now && now.value === d.value && now.get === d.get && now.set === d.set) continue;
      try {
        Object.defineProperty(o, key, d);
        restored++;
      } catch {
        // made read-only since: left as it is
      }
    }
    return restored;
  };
}
