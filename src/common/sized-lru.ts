/**
 * A least-recently-used map bounded by the summed size of its values, in Map order (a read moves
 * the key to the end). A value larger than an eighth of the bound is not kept, so one entry cannot
 * empty the map.
 */
export class SizedLru<V> {
  private readonly map = new Map<string, { value: V; size: number }>();
  private total = 0;

  constructor(
    private readonly max: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(key: string): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    const size = this.sizeOf(value);
    if (size > this.max / 8) return;
    this.map.set(key, { value, size });
    this.total += size;
    for (const [k, e] of this.map) {
      if (this.total <= this.max) break;
      this.map.delete(k);
      this.total -= e.size;
    }
  }

  delete(key: string): void {
    const e = this.map.get(key);
    if (e) {
      this.map.delete(key);
      this.total -= e.size;
    }
  }

  clear(): void {
    this.map.clear();
    this.total = 0;
  }
}
