import { execFile, spawn } from 'node:child_process';
import * as path from 'node:path';
import { ROOT } from './process';

const CLI = path.join(ROOT, 'dist', 'src', 'cli.js');

/** The CLI as a user runs it in a folder of their own (where it reads .env): it runs to its end. */
export function siftIn(
  cwd: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd, env: { PATH: process.env.PATH ?? '', ...env } },
      (error, out, err) =>
        resolve({
          code: error ? ((error as { code?: number }).code ?? 1) : 0,
          out: String(out),
          err: String(err),
        }),
    ),
  );
}

export interface SiftChild {
  /** Standard error (on a terminal: everything the terminal showed), as it has come so far. */
  err: () => string;
  out: () => string;
  code: Promise<number | null>;
  /** Ctrl-C: SIGINT to the process, or on a terminal the ^C key, as a user sends it. */
  interrupt: () => void;
}

/** The CLI as a child whose output is read while it runs, its standard error a pipe. */
export function spawnSift(args: string[], env: Record<string, string>): SiftChild {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const code = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  return { code, out: () => out, err: () => err, interrupt: () => child.kill('SIGINT') };
}

const quoted = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The CLI on a real terminal: util-linux `script` gives it a pseudo-terminal for its standard
 * streams, so it sees isTTY as a user's shell does, and ^C typed there is the terminal's SIGINT.
 * What the terminal showed (both streams, newlines as \r\n) is `err()`.
 */
export function spawnSiftOnTerminal(args: string[], env: Record<string, string>): SiftChild {
  const command = [process.execPath, CLI, ...args].map(quoted).join(' ');
  const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', TERM: 'dumb', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let shown = '';
  child.stdout.on('data', (d) => (shown += d));
  child.stderr.on('data', (d) => (shown += d));
  const code = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  return { code, out: () => shown, err: () => shown, interrupt: () => child.stdin.write('\x03') };
}
