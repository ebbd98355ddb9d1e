import { BatchStore, type BatchJob, type BatchTarget } from '../../src/dcache';

/** The seed's public surface, copied from SPEC "The batch store" as it stands there. */
interface SeedBatchStore {
  createBatchJob(j: BatchJob): Promise<void>;
  batchJob(id: string): Promise<BatchJob | undefined>;
  batchJobByIdem(
    caller: string,
    idemKey: string,
    now: number,
    ttlSeconds: number,
  ): Promise<string | undefined>;
  liveBatchJobs(caller: string): Promise<number>;
  liveBatchJobsTotal(): Promise<number>;
  putBatchTargets(jobId: string, targets: BatchTarget[]): Promise<void>;
  batchTargets(jobId: string): Promise<BatchTarget[] | undefined>;
  updateBatchTarget(
    jobId: string,
    idx: number,
    now: number,
    status: string,
    result: string | null,
    errMsg: string | null,
    hint: string | null,
  ): Promise<void>;
  setBatchJobStatus(id: string, status: string, errMsg: string, now: number): Promise<void>;
  touchBatchJob(id: string, now: number): Promise<void>;
  sweepBatch(now: number, ttlSeconds: number): Promise<number>;
  evictBatchOldest(maxBytes: number): Promise<number>;
  markInFlightFailed(reason: string, now: number): Promise<number>;
  batchNbytes(): Promise<number>;
}

type Method = keyof SeedBatchStore;

/** True only when A and B are the same type (not merely assignable one way). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/**
 * Status parameters are typed by sift's status unions, narrower than the seed's `string`; every
 * other parameter, their number and order, and the result must be the seed's exactly. Widening
 * the statuses back to string is the only change made before comparing.
 */
type Widen<T> = { [K in keyof T]: T[K] extends string ? (string extends T[K] ? T[K] : string) : T[K] };
type Params<M extends Method> = Widen<Parameters<BatchStore[M]>>;

type Checks = {
  [M in Method]: [
    Same<Params<M>, Parameters<SeedBatchStore[M]>>,
    Same<ReturnType<BatchStore[M]>, ReturnType<SeedBatchStore[M]>>,
  ];
};
type AllTrue = { [M in Method]: [true, true] };
// Fails to compile when any method's parameter list (names aside) or result differs from the seed's.
const exact: Same<Checks, AllTrue> = true;

/** The seed's parameter names, in order, as written in SPEC. */
const NAMES: Record<Method, string[]> = {
  createBatchJob: ['j'],
  batchJob: ['id'],
  batchJobByIdem: ['caller', 'idemKey', 'now', 'ttlSeconds'],
  liveBatchJobs: ['caller'],
  liveBatchJobsTotal: [],
  putBatchTargets: ['jobId', 'targets'],
  batchTargets: ['jobId'],
  updateBatchTarget: ['jobId', 'idx', 'now', 'status', 'result', 'errMsg', 'hint'],
  setBatchJobStatus: ['id', 'status', 'errMsg', 'now'],
  touchBatchJob: ['id', 'now'],
  sweepBatch: ['now', 'ttlSeconds'],
  evictBatchOldest: ['maxBytes'],
  markInFlightFailed: ['reason', 'now'],
  batchNbytes: [],
};

/** The parameter names of a compiled method, read from its source text. */
function paramNames(fn: (...args: never[]) => unknown): string[] {
  const text = Function.prototype.toString.call(fn);
  const open = text.indexOf('(');
  const list = text.slice(open + 1, text.indexOf(')', open));
  return list
    .split(',')
    .map((p) => p.trim().split(/[\s=:]/)[0])
    .filter((p) => p.length > 0);
}

describe("BatchStore keeps the seed's surface", () => {
  it('has every method with the seed parameter types, order and results (checked by the compiler)', () => {
    expect(exact).toBe(true);
  });

  it.each(Object.entries(NAMES))('%s takes the seed parameters, by position and name', (name, names) => {
    const fn = (BatchStore.prototype as unknown as Record<string, (...args: never[]) => unknown>)[name];
    expect(typeof fn).toBe('function');
    expect(fn.length).toBe(names.length);
    expect(paramNames(fn)).toEqual(names);
  });
});
