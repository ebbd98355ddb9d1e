import * as fs from 'node:fs';
import * as path from 'node:path';
import { CHROMIUM_PATHS } from '../../src/config/env.schema';
import { firstExecutable, parseCidrs } from '../../src/config/parsers';
import { AddressCheck } from '../../src/fetch/address-check';
import { AddressPolicy } from '../../src/fetch/address-policy';
import type { Resolver } from '../../src/fetch/dns-guard';
import { systemResolver } from '../../src/fetch/fetcher';
import { renderGate } from '../../src/render/render-gate';
import { Renderer, type RendererOptions } from '../../src/render/renderer';
import type { RenderRequest } from '../../src/render/render-types';

export const CHROMIUM = firstExecutable(process.env.SIFT_CHROMIUM_PATH || CHROMIUM_PATHS);

/**
 * Chromium's browser process among `pids` (a launcher's tree): the first that runs a Chromium
 * binary with no `--type` (the launcher, and a wrapper script such as Debian's headless shell
 * has, are not it).
 */
export function browserProcess(pids: number[]): number {
  for (const pid of pids) {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (/chrom/.test(path.basename(argv[0])) && !argv.some((a) => a.startsWith('--type='))) return pid;
    } catch {
      // gone
    }
  }
  throw new Error(`no Chromium browser process among ${pids.join(' ')}`);
}

/** A Renderer over the real Chromium, the real proxy, an address check on `resolver` and `allow` for fleet callers. */
export function testRenderer(
  o: Partial<RendererOptions> & { allow?: string; resolver?: Resolver } = {},
): Renderer {
  const check = new AddressCheck({
    policy: new AddressPolicy(parseCidrs(o.allow ?? '127.0.0.0/8')),
    resolver: o.resolver ?? systemResolver,
    dns: { timeoutMs: 2000, perCaller: 4, reuseMs: 0 },
  });
  return new Renderer({
    chromiumPath: CHROMIUM,
    pages: 2,
    perCaller: { fleet: 4, restricted: 1 },
    recycleAfter: 200,
    maxMemory: 2 * 1024 ** 3,
    gate: (callerClass, who) => renderGate(check, callerClass, who),
    ...o,
  });
}

/** A fleet render of `url` with a 15 s deadline, as the pipeline would ask. */
export function renderOf(url: string, o: Partial<RenderRequest> = {}): RenderRequest {
  return {
    url: new URL(url),
    callerClass: 'fleet',
    who: 'fleet:test',
    timeoutMs: 15_000,
    maxBytes: 10 * 1024 * 1024,
    signal: new AbortController().signal,
    ...o,
  };
}

/** Where a promise's rejection is, as {code, status}, for expect(). */
export async function failure(
  p: Promise<unknown>,
): Promise<{ code?: string; status?: number; message?: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code?: string; status?: number; message?: string };
    return { code: e.code, status: e.status, message: e.message };
  }
  return { code: 'none' };
}
