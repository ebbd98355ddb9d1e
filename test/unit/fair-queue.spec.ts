import { FairQueue } from '../../src/extract/fair-queue';

describe('FairQueue (extraction workers shared between callers)', () => {
  const takeAll = (q: FairQueue<string>, n: number) => Array.from({ length: n }, () => q.take()?.item);

  it('serves callers round robin, whatever order their pages came in', () => {
    const q = new FairQueue<string>(8);
    for (const p of ['a1', 'a2', 'a3', 'a4']) q.push('a', p);
    q.push('b', 'b1');
    q.push('c', 'c1');
    expect(takeAll(q, 6)).toEqual(['a1', 'b1', 'c1', 'a2', 'a3', 'a4']);
    expect(q.length).toBe(0);
  });

  it('while another caller waits, a caller holds at most ceil(workers / callers) workers', () => {
    const q = new FairQueue<string>(4);
    for (let i = 0; i < 8; i++) q.push('a', `a${i}`);
    // Alone, a caller may take every worker.
    expect(takeAll(q, 4)).toEqual(['a0', 'a1', 'a2', 'a3']);
    q.push('b', 'b0');
    q.push('b', 'b1');
    // Two of a's pages end: both workers go to b (a holds 2 of 4, its share; b holds none).
    q.release('a');
    q.release('a');
    expect(takeAll(q, 2)).toEqual(['b0', 'b1']);
    // b has nothing more waiting: a freed worker goes to a again, no worker idles.
    q.release('b');
    expect(q.take()).toEqual({ caller: 'a', item: 'a4' });
  });

  it('a page put back is the next of its caller, and its worker is free again', () => {
    const q = new FairQueue<string>(2);
    for (const p of ['a0', 'a1', 'a2']) q.push('a', p);
    expect(takeAll(q, 2)).toEqual(['a0', 'a1']);
    q.push('b', 'b0');
    // a1 was handed to a worker that was lost before it began: a holds one worker now, b none.
    q.putBack('a', 'a1');
    expect(q.length).toBe(3);
    expect(takeAll(q, 3)).toEqual(['b0', 'a1', 'a2']);
  });
});
