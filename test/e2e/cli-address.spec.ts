import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { siftIn } from '../support/cli-child';
import { ensureBuilt, freePort, kill, startSiftProcess, type SiftProcess } from '../support/process';

const TOKEN = 'cli-address-token-0123456789';

/** Where the CLI looks for sift: a real sift process, and the CLI run from folders of their own. */
describe('the CLI finds sift where the server listens', () => {
  let server: SiftProcess;
  let root: string;

  /** A folder holding one environment file, as a checkout does. */
  const folder = (name: string, text: string) => {
    const dir = fs.mkdtempSync(path.join(root, 'checkout-'));
    fs.writeFileSync(path.join(dir, name), text);
    return dir;
  };

  beforeAll(async () => {
    ensureBuilt();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-cli-address-'));
    server = await startSiftProcess({
      SIFT_DB: path.join(root, 'sift.db'),
      SIFT_TOKENS: `${TOKEN}:cli-address:fleet`,
    });
  }, 120_000);

  afterAll(async () => {
    if (server) await kill(server, 'SIGTERM');
  });

  it('takes SIFT_HOST and PORT from .env or .env.example when SIFT_URL is unset; a refusal names the URL, how it was chosen, and SIFT_URL', async () => {
    const port = new URL(server.url).port;
    // A wildcard bind, as a server reachable from elsewhere has it: loopback reaches it too.
    const wildcard = folder('.env', `SIFT_HOST=0.0.0.0\nPORT=${port}\n`);
    const found = await siftIn(wildcard, ['jobs'], { SIFT_TOKEN: TOKEN });
    expect([found.code, found.err]).toEqual([0, '']);
    const example = folder('.env.example', `PORT=${port}\n`);
    expect((await siftIn(example, ['jobs'], { SIFT_TOKEN: TOKEN })).code).toBe(0);

    const closed = await freePort();
    const v6 = folder('.env', `SIFT_HOST=::\nPORT=${closed}\n`);
    const refused = await siftIn(v6, ['jobs'], { SIFT_TOKEN: TOKEN });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(
      `cannot reach sift at http://[::1]:${closed} (from SIFT_HOST=:: and PORT=${closed} in ${path.join(v6, '.env')})`,
    );
    expect(refused.err).toContain('set SIFT_URL');

    // The environment wins over the file, and says so.
    const mixed = await siftIn(wildcard, ['jobs'], { SIFT_TOKEN: TOKEN, PORT: String(closed) });
    expect(mixed.err).toContain(
      `cannot reach sift at http://127.0.0.1:${closed} (from SIFT_HOST=0.0.0.0 in ${path.join(wildcard, '.env')}, PORT=${closed} in the environment)`,
    );
    const given = await siftIn(wildcard, ['jobs'], {
      SIFT_TOKEN: TOKEN,
      SIFT_URL: `http://127.0.0.1:${closed}/`,
    });
    expect(given.err).toContain(`cannot reach sift at http://127.0.0.1:${closed} (from SIFT_URL)`);
    expect(given.err).toContain('set SIFT_URL');
  });
});
