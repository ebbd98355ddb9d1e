import { FairShare } from '../../src/common/fair-share';
import { FairSlots, Preempted, type Hold } from '../../src/common/fair-slots';

describe('FairShare (the queue every shared pool is handed out by)', () => {
  const takeAll = (q: FairShare<string>, n: number) => Array.from({ length: n }, () => q.take()?.item);

  it('serves callers round robin, whatever order their work came in', () => {
    const q = new FairShare<string>(8);
    for (const p of ['a1', 'a2', 'a3', 'a4']) q.push('fleet:a', p);
    q.push('fleet:b', 'b1');
    q.push('fleet:c', 'c1');
    expect(takeAll(q, 6)).toEqual(['a1', 'b1', 'c1', 'a2', 'a3', 'a4']);
    expect(q.length).toBe(0);
  });

  it('while another caller waits, a caller holds at most ceil(places / callers)', () => {
    const q = new FairShare<string>(4);
    for (let i = 0; i < 8; i++) q.push('fleet:a', `a${i}`);
    // Alone, a fleet caller may take every place.
    expect(takeAll(q, 4)).toEqual(['a0', 'a1', 'a2', 'a3']);
    q.push('fleet:b', 'b0');
    q.push('fleet:b', 'b1');
    // Two of a's end: both places go to b (a holds 2 of 4, its share; b holds none).
    q.release('fleet:a');
    q.release('fleet:a');
    expect(takeAll(q, 2)).toEqual(['b0', 'b1']);
    // b has nothing more waiting: a freed place goes to a again, no place idles.
    q.release('fleet:b');
    expect(q.take()).toEqual({ caller: 'fleet:a', item: 'a4' });
  });

  it('a restricted caller never holds more than half the places, even alone', () => {
    const q = new FairShare<string>(4);
    for (let i = 0; i < 4; i++) q.push('restricted:r', `r${i}`);
    expect(takeAll(q, 4)).toEqual(['r0', 'r1', undefined, undefined]);
    // With one place, half is still one.
    const one = new FairShare<string>(1);
    one.push('restricted:r', 'r0');
    expect(one.take()?.item).toBe('r0');
    // A fleet caller takes what the restricted one may not.
    q.push('fleet:f', 'f0');
    q.push('fleet:f', 'f1');
    expect(takeAll(q, 3)).toEqual(['f0', 'f1', undefined]);
  });

  it('work put back is the next of its caller, and its place is free again', () => {
    const q = new FairShare<string>(2);
    for (const p of ['a0', 'a1', 'a2']) q.push('fleet:a', p);
    expect(takeAll(q, 2)).toEqual(['a0', 'a1']);
    q.push('fleet:b', 'b0');
    // a1's place was lost before it began: a holds one place now, b none.
    q.putBack('fleet:a', 'a1');
    expect(q.length).toBe(3);
    expect(q.take()?.item).toBe('b0');
    q.release('fleet:a');
    expect(q.take()?.item).toBe('a1');
    q.release('fleet:b');
    expect(q.take()?.item).toBe('a2');
  });

  it('work removed while it waits is never handed out', () => {
    const q = new FairShare<string>(1);
    q.push('fleet:a', 'a0');
    q.push('fleet:a', 'a1');
    expect(q.remove('fleet:a', 'a0')).toBe(true);
    expect(q.remove('fleet:a', 'a0')).toBe(false);
    expect(q.take()?.item).toBe('a1');
    expect(q.length).toBe(0);
  });
});

describe('FairSlots (places as promises: deadlines, callers leaving, preemption)', () => {
  /** Resolves once every callback queued so far has run. */
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  /** Acquires and records the order places are granted in. */
  function recorder(slots: FairSlots) {
    const granted: string[] = [];
    const holds = new Map<string, Hold>();
    const ask = (caller: string, name: string, opts: Parameters<FairSlots['acquire']>[1] = {}) => {
      const p = slots.acquire(caller, opts).then((h) => {
        granted.push(name);
        holds.set(name, h);
        return h;
      });
      p.catch(() => undefined);
      return p;
    };
    return { granted, holds, ask };
  }

  it('grants up to its places at once, then in turn round robin as places are released', async () => {
    const slots = new FairSlots(2);
    const { granted, holds, ask } = recorder(slots);
    for (const n of ['a0', 'a1', 'a2', 'a3']) void ask('fleet:a', n);
    void ask('fleet:b', 'b0');
    void ask('fleet:b', 'b1');
    await settle();
    expect(granted).toEqual(['a0', 'a1']);
    expect(slots.inUse).toBe(2);
    expect(slots.waiting).toBe(4);
    holds.get('a0')!.release();
    await settle();
    // b holds nothing and waits: the place is its.
    expect(granted).toEqual(['a0', 'a1', 'b0']);
    holds.get('a1')!.release();
    await settle();
    // a and b hold one each now; a is next in turn.
    expect(granted).toEqual(['a0', 'a1', 'b0', 'a2']);
    holds.get('a2')!.release();
    holds.get('a2')!.release(); // twice is once
    await settle();
    // a holds none, b one: a's turn again.
    expect(granted).toEqual(['a0', 'a1', 'b0', 'a2', 'a3']);
    expect(slots.inUse).toBe(2);
    holds.get('b0')!.release();
    await settle();
    expect(granted).toEqual(['a0', 'a1', 'b0', 'a2', 'a3', 'b1']);
  });

  it("a wait ends with its signal's reason (the request's deadline), and the place goes to the next", async () => {
    const slots = new FairSlots(1);
    const { granted, holds, ask } = recorder(slots);
    void ask('fleet:a', 'a0');
    const deadline = new AbortController();
    const late = ask('fleet:b', 'b0', { signal: deadline.signal });
    void ask('fleet:c', 'c0');
    await settle();
    deadline.abort(new Error('timed out waiting'));
    await expect(late).rejects.toThrow('timed out waiting');
    holds.get('a0')!.release();
    await settle();
    expect(granted).toEqual(['a0', 'c0']);
    // An aborted signal refuses at once.
    await expect(slots.acquire('fleet:d', { signal: deadline.signal })).rejects.toThrow('timed out');
  });

  it('a caller that leaves (every wait aborted, its holds released) leaves no trace in the shares', async () => {
    const slots = new FairSlots(2);
    const { granted, holds, ask } = recorder(slots);
    const gone = new AbortController();
    void ask('fleet:a', 'a0', { signal: gone.signal });
    void ask('fleet:a', 'a1', { signal: gone.signal });
    for (let i = 0; i < 3; i++) void ask('fleet:a', `a${i + 2}`, { signal: gone.signal });
    await settle();
    gone.abort(new Error('hung up'));
    holds.get('a0')!.release();
    holds.get('a1')!.release();
    expect(slots.held('fleet:a')).toBe(0);
    expect(slots.waiting).toBe(0);
    for (const n of ['b0', 'b1']) void ask('fleet:b', n);
    await settle();
    expect(granted).toEqual(['a0', 'a1', 'b0', 'b1']);
  });

  it('preempts the youngest preemptible hold of a caller over its share when another waits under its own', async () => {
    const slots = new FairSlots(2);
    const { granted, holds, ask } = recorder(slots);
    void ask('fleet:a', 'a0', { preemptible: true });
    void ask('fleet:a', 'a1', { preemptible: true });
    void ask('fleet:a', 'a2', { preemptible: true });
    await settle();
    expect(granted).toEqual(['a0', 'a1']);
    // Another caller waiting behind a caller's own work: no preemption.
    expect(holds.get('a1')!.preempted.aborted).toBe(false);
    void ask('fleet:b', 'b0');
    await settle();
    expect(holds.get('a0')!.preempted.aborted).toBe(false);
    expect(holds.get('a1')!.preempted.aborted).toBe(true);
    expect(holds.get('a1')!.preempted.reason).toBeInstanceOf(Preempted);
    // The work gives its place up and comes back first among its caller's.
    holds.get('a1')!.release();
    void ask('fleet:a', 'a1 again', { preemptible: true, front: true });
    await settle();
    expect(granted).toEqual(['a0', 'a1', 'b0']);
    holds.get('b0')!.release();
    await settle();
    expect(granted).toEqual(['a0', 'a1', 'b0', 'a1 again']);
    // One preemption for one wronged caller: a0 was never asked.
    expect(holds.get('a0')!.preempted.aborted).toBe(false);
  });

  it('tells a hold it was asked to go whether its signal was read before the asking or after', async () => {
    for (const listens of [true, false]) {
      const slots = new FairSlots(2);
      const { holds, ask } = recorder(slots);
      void ask('fleet:a', 'a0', { preemptible: true });
      void ask('fleet:a', 'a1', { preemptible: true });
      await settle();
      const heard: unknown[] = [];
      if (listens) {
        holds
          .get('a1')!
          .preempted.addEventListener('abort', (e) => heard.push((e.target as AbortSignal).reason));
      }
      void ask('fleet:b', 'b0');
      await settle();
      expect(heard).toHaveLength(listens ? 1 : 0);
      expect(holds.get('a1')!.preempted.aborted).toBe(true);
      expect(holds.get('a1')!.preempted.reason).toBeInstanceOf(Preempted);
      expect(holds.get('a1')!.preempted).toBe(holds.get('a1')!.preempted);
      expect(holds.get('a0')!.preempted.aborted).toBe(false);
    }
  });

  it('never preempts work that cannot stop, nor a caller within its share', async () => {
    const slots = new FairSlots(2);
    const { granted, holds, ask } = recorder(slots);
    void ask('fleet:a', 'a0');
    void ask('fleet:a', 'a1');
    void ask('fleet:b', 'b0');
    await settle();
    expect([holds.get('a0')!.preempted.aborted, holds.get('a1')!.preempted.aborted]).toEqual([false, false]);
    holds.get('a0')!.release();
    await settle();
    expect(granted).toEqual(['a0', 'a1', 'b0']);
    // a and b hold one each, their share: c waiting takes nothing from them.
    const c = recorder(slots);
    void c.ask('fleet:c', 'c0');
    void ask('fleet:a', 'a2', { preemptible: true });
    await settle();
    expect(holds.get('a1')!.preempted.aborted).toBe(false);
    expect(holds.get('b0')!.preempted.aborted).toBe(false);
  });

  it('a restricted caller alone holds half of a pool, and is preempted first when over its share', async () => {
    const slots = new FairSlots(4);
    const { granted, holds, ask } = recorder(slots);
    for (let i = 0; i < 4; i++) void ask('restricted:r', `r${i}`, { preemptible: true });
    await settle();
    expect(granted).toEqual(['r0', 'r1']);
    expect(slots.inUse).toBe(2);
    for (let i = 0; i < 3; i++) void ask('fleet:f', `f${i}`, { preemptible: true });
    await settle();
    // The two free places go to the fleet caller; full now, r (2) and f (2) each hold their share.
    expect(granted).toEqual(['r0', 'r1', 'f0', 'f1']);
    expect([...holds.values()].some((h) => h.preempted.aborted)).toBe(false);
  });
});
