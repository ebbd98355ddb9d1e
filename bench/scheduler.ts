/**
 * bench/scheduler: what the one fair scheduler (FairSlots) costs each time work takes a place,
 * against the first-come queue a pool would use without it (a counting semaphore, as sift's pools
 * had before), in alternating rounds (medians). Three pools as sift runs them: extraction workers
 * (2 places, 16 pages in flight from one caller, as in bench/batch), the same with four callers,
 * and MCP servers (64 places, 32 calls at once, most taking a free place at once). The work
 * itself is one turn of the event loop, the same for both; the difference is the scheduler's.
 */
import { FairSlots } from '../src/common/fair-slots';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const TAKES = Number(process.env.BENCH_TAKES ?? 40_000);

/** What a pool uses without fair sharing: one first-come queue of waiters. */
class FirstCome {
  private busy = 0;
  private readonly queue: (() => void)[] = [];
  constructor(private readonly places: number) {}
  tryAcquire(): { release(): void } | undefined {
    if (this.busy >= this.places || this.queue.length > 0) return undefined;
    this.busy++;
    return this.hold();
  }
  acquire(): Promise<{ release(): void }> {
    return new Promise((resolve) => {
      this.queue.push(() => resolve(this.hold()));
      this.dispatch();
    });
  }
  private hold(): { release(): void } {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.busy--;
        this.dispatch();
      },
    };
  }
  private dispatch(): void {
    while (this.busy < this.places && this.queue.length > 0) {
      this.busy++;
      this.queue.shift()!();
    }
  }
}

interface Pool {
  tryAcquire(caller: string): { release(): void } | undefined;
  acquire(caller: string): Promise<{ release(): void }>;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `takes` pieces of work through the pool, `inFlight` at once spread over `callers`: CPU µs per take. */
async function run(pool: Pool, takes: number, inFlight: number, callers: number): Promise<number> {
  let left = takes;
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: inFlight }, async (_, i) => {
      const caller = `fleet:c${i % callers}`;
      while (left > 0) {
        left--;
        const hold = pool.tryAcquire(caller) ?? (await pool.acquire(caller));
        await turn();
        hold.release();
      }
    }),
  );
  const used = process.cpuUsage(cpu0);
  return (used.user + used.system) / takes;
}

const fair = (places: number): Pool => {
  const slots = new FairSlots(places);
  return { tryAcquire: (c) => slots.tryAcquire(c), acquire: (c) => slots.acquire(c) };
};
const firstCome = (places: number): Pool => {
  const q = new FirstCome(places);
  return { tryAcquire: () => q.tryAcquire(), acquire: () => q.acquire() };
};

export async function benchScheduler(): Promise<Record<string, number | string>> {
  const cases: [string, number, number, number][] = [
    ['extraction workers: 2 places, 16 in flight, 1 caller', 2, 16, 1],
    ['extraction workers: 2 places, 16 in flight, 4 callers', 2, 16, 4],
    ['MCP servers: 64 places, 32 in flight, 8 callers', 64, 32, 8],
  ];
  const out: Record<string, number | string> = {
    rounds: `${ROUNDS} alternating rounds of ${TAKES} takes per pool, medians`,
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  for (const [name, places, inFlight, callers] of cases) {
    // Warm both up first.
    await run(fair(places), TAKES / 4, inFlight, callers);
    await run(firstCome(places), TAKES / 4, inFlight, callers);
    const a: number[] = [];
    const b: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const first = r % 2 === 0;
      if (first) a.push(await run(fair(places), TAKES, inFlight, callers));
      b.push(await run(firstCome(places), TAKES, inFlight, callers));
      if (!first) a.push(await run(fair(places), TAKES, inFlight, callers));
    }
    const diffs = a.map((x, i) => x - b[i]);
    out[`${name}: fair µs CPU per take`] = +median(a).toFixed(2);
    out[`${name}: first-come µs CPU per take`] = +median(b).toFixed(2);
    out[`${name}: fair - first-come µs, median of the rounds'`] = +median(diffs).toFixed(2);
  }
  return out;
}
