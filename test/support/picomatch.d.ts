/** The part of picomatch 4 the glob tests compare sift's globs with (the package ships no types). */
declare module 'picomatch' {
  interface PicomatchOptions {
    dot?: boolean;
    noextglob?: boolean;
    nonegate?: boolean;
    windows?: boolean;
  }
  function picomatch(glob: string, options?: PicomatchOptions): (test: string) => boolean;
  namespace picomatch {
    function makeRe(glob: string, options?: PicomatchOptions): RegExp;
  }
  export = picomatch;
}
