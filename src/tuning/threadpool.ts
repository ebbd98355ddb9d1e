// DNS lookups run on libuv's thread pool (4 threads unless told), beside file and zlib work. sift
// caps the lookups of each caller (SIFT_DNS_PER_CALLER), and a wider pool keeps a few callers
// with black-holed names from holding every thread. libuv reads this when the pool first starts,
// so it is set before anything uses it: this module is the entry points' first import.
process.env.UV_THREADPOOL_SIZE ??= '16';
