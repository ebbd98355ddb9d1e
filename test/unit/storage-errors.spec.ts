import { DATABASE_ERROR, FetchError, isStorageUnavailable } from '../../src/common/errors';

const marked = <T extends object>(e: T): T => Object.assign(e, { [DATABASE_ERROR]: true });
const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isStorageUnavailable: only the database being away counts', () => {
  it("a page's connection reset is the page's, never the database's", () => {
    const reset = withCode('read ECONNRESET', 'ECONNRESET');
    expect(isStorageUnavailable(reset)).toBe(false);
    expect(
      isStorageUnavailable(Object.assign(new FetchError('connect_error', 'reset'), { cause: reset })),
    ).toBe(false);
    expect(isStorageUnavailable(new Error('Connection terminated unexpectedly'))).toBe(false);
  });

  it('the database driver refused, reset, cut or timed out is unavailable', () => {
    expect(
      isStorageUnavailable(marked(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))),
    ).toBe(true);
    expect(isStorageUnavailable(marked(new Error('Connection terminated unexpectedly')))).toBe(true);
    expect(
      isStorageUnavailable(marked(withCode('terminating connection due to administrator command', '57P01'))),
    ).toBe(true);
    expect(isStorageUnavailable(marked(withCode('canceling statement due to lock timeout', '55P03')))).toBe(
      true,
    );
    expect(isStorageUnavailable(marked(withCode('connection failure', '08006')))).toBe(true);
    expect(isStorageUnavailable(withCode('database is locked', 'SQLITE_BUSY'))).toBe(true);
  });

  it("a bad statement is the statement's: not unavailable", () => {
    expect(isStorageUnavailable(marked(withCode('duplicate key value', '23505')))).toBe(false);
    expect(isStorageUnavailable(marked(withCode('syntax error', '42601')))).toBe(false);
  });
});
