import { spawn } from 'node:child_process';
import { keepBuiltins } from '../../src/documents/builtins';
import { childModule, pdfjsRoot } from '../../src/documents/child-source';

/**
 * The parser's process keeps JavaScript's own functions: pdf.js's legacy build replaces some with
 * polyfills as it loads (on Node 20 `Array.prototype.push`, which every reader calls), and the
 * child puts them back once pdf.js has loaded, keeping what pdf.js only added.
 */

describe("the engine's own functions", () => {
  it('are put back where they were replaced; what was added stays', () => {
    const push = Array.prototype.push;
    const parse = JSON.parse;
    const restore = keepBuiltins();
    try {
      // A polyfill's way: a function of its own in the engine's place, and a method it adds.
      Object.defineProperty(Array.prototype, 'push', {
        value: function push(this: unknown[], ...items: unknown[]) {
          for (const item of items) this[this.length] = item;
          return this.length;
        },
        writable: true,
        configurable: true,
      });
      JSON.parse = (text: string) => parse(text) as unknown;
      Object.defineProperty(Array.prototype, 'siftAdded', { value: 1, configurable: true });
      expect(restore()).toBe(2);
      expect(Array.prototype.push).toBe(push);
      expect(JSON.parse).toBe(parse);
      expect((Array.prototype as unknown as { siftAdded: number }).siftAdded).toBe(1);
      // Nothing more to put back.
      expect(restore()).toBe(0);
    } finally {
      Object.defineProperty(Array.prototype, 'push', { value: push, writable: true, configurable: true });
      JSON.parse = parse;
      delete (Array.prototype as unknown as { siftAdded?: number }).siftAdded;
    }
  });

  it("in a parser process, after pdf.js's legacy build has loaded", async () => {
    // As the parent's boot does (parser-process.ts), then what differs from before it started.
    const script = `
      const [file, root] = process.argv.slice(1);
      const natives = { push: Array.prototype.push, parse: JSON.parse, stringify: JSON.stringify,
        toString: Function.prototype.toString };
      const changed = () => Object.keys(natives).filter((k) =>
        (k === 'push' ? Array.prototype.push : k === 'toString' ? Function.prototype.toString : JSON[k]) !== natives[k]);
      const path = require('node:path');
      const { pathToFileURL } = require('node:url');
      const child = require(file);
      child.prepare(root);
      const at = (f) => import(pathToFileURL(path.join(root, 'legacy', 'build', f)).href);
      Promise.all([at('pdf.mjs'), at('pdf.worker.mjs')]).then(([pdfjs, worker]) => {
        const byPdfjs = changed();
        child.serve(pdfjs, worker, root);
        process.send({ byPdfjs, after: changed(), withResolvers: typeof Promise.withResolvers });
      });`;
    const proc = spawn(process.execPath, ['-e', script, '--', childModule(), pdfjsRoot()], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    try {
      const report = await new Promise<{ byPdfjs: string[]; after: string[]; withResolvers: string }>(
        (resolve, reject) => {
          proc.on('message', (m: { ready?: true; after?: string[] }) => {
            if (!m.ready) resolve(m as never);
          });
          proc.on('exit', (code) => reject(new Error(`the child exited (${code})`)));
        },
      );
      // Node 20 has a polyfilled push among them; a newer node may have none replaced.
      if (process.versions.node.startsWith('20.')) expect(report.byPdfjs).toContain('push');
      expect(report.after).toEqual([]);
      expect(report.withResolvers).toBe('function');
    } finally {
      proc.kill('SIGKILL');
    }
  });
});
