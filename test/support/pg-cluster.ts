import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

/** The folder of the system's initdb and pg_ctl (PATH first, then /usr/lib/postgresql/<newest>/bin). */
export function pgBin(): string | undefined {
  const dirs = (process.env.PATH ?? '').split(':');
  const versions = fs.existsSync('/usr/lib/postgresql')
    ? fs.readdirSync('/usr/lib/postgresql').sort().reverse()
    : [];
  for (const v of versions) dirs.push(path.join('/usr/lib/postgresql', v, 'bin'));
  return dirs.find((d) => fs.existsSync(path.join(d, 'initdb')) && fs.existsSync(path.join(d, 'pg_ctl')));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/**
 * A PostgreSQL server of a test's own, made with initdb and run with pg_ctl on a free port (as the
 * postgres user when the tests run as root: initdb refuses root). Tests restart and stop it; the
 * machine's shared server is never touched.
 */
export class ThrowawayCluster {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-pg-'));
  readonly data = path.join(this.dir, 'data');
  port = 0;

  constructor(private readonly bin: string) {}

  static async start(): Promise<ThrowawayCluster> {
    const bin = pgBin();
    if (!bin) throw new Error('no initdb/pg_ctl: install PostgreSQL (Debian: postgresql)');
    const c = new ThrowawayCluster(bin);
    if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres', c.dir]);
    c.port = await freePort();
    c.run(['initdb', '-D', c.data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    c.pgCtl('start');
    return c;
  }

  /** postgres://postgres@127.0.0.1:<port>/<db> */
  url(db = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${db}`;
  }

  run(args: string[]): void {
    const [cmd, ...rest] = args;
    const full = path.join(this.bin, cmd);
    if (process.getuid?.() === 0)
      execFileSync('runuser', ['-u', 'postgres', '--', full, ...rest], { stdio: 'ignore' });
    else execFileSync(full, rest, { stdio: 'ignore' });
  }

  /** pg_ctl start | restart | stop, waiting for it; `mode` is pg_ctl's -m (fast, immediate). */
  pgCtl(action: 'start' | 'restart' | 'stop', mode: 'fast' | 'immediate' = 'fast'): void {
    this.run([
      'pg_ctl',
      '-D',
      this.data,
      '-l',
      path.join(this.dir, 'log'),
      '-w',
      '-m',
      mode,
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`,
      action,
    ]);
  }

  /** Stops the server (immediately) and removes its files. */
  destroy(): void {
    try {
      this.pgCtl('stop', 'immediate');
    } catch {
      // stopped already
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
