import { ParserProcess } from '../../src/documents/parser-process';

/**
 * Which parser processes are reading a page of a document right now, as they report it (each
 * says so as a page starts): a test that acts mid-parse (kills, aborts, closes) waits for this.
 * `restore()` puts ParserProcess back as it was. Plain code, no jest: a child script uses it too.
 */
export function watchReading(): { reading: () => number[]; restore: () => void } {
  const proto = ParserProcess.prototype;
  const run = proto.run;
  const reading = new Set<number>();
  proto.run = function (this: ParserProcess, job, progress) {
    const pid = this.pid;
    const page = (n: number) => {
      if (n >= 1 && pid !== undefined) reading.add(pid);
      progress(n);
    };
    return run.call(this, job, page).finally(() => pid !== undefined && reading.delete(pid));
  };
  return {
    reading: () => [...reading],
    restore: () => {
      proto.run = run;
    },
  };
}
