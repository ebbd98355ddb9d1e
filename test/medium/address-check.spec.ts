import type { LookupAddress } from 'node:dns';
import * as ipaddr from 'ipaddr.js';
import type { CallerClass } from '../../src/config/parsers';
import type { SiftError } from '../../src/common/errors';
import { AddressCheck } from '../../src/fetch/address-check';
import { AddressPolicy } from '../../src/fetch/address-policy';
import { Fetcher, type Resolver } from '../../src/fetch/fetcher';
import { renderGate } from '../../src/render/render-gate';

/** What the test resolver answers; a name not here fails as getaddrinfo does. */
const TABLE: Record<string, string[]> = {
  'public.test': ['93.184.215.14'],
  'private.test': ['127.0.0.3'],
  'mixed.test': ['93.184.215.14', '127.0.0.3'],
  'allowed.test': ['127.0.0.2'],
  'empty.test': [],
};

const resolver: Resolver = async (host) => {
  if (host === 'flaky.test') throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
  if (host === 'silent.test') return new Promise<LookupAddress[]>(() => undefined);
  const addrs = TABLE[host];
  if (!addrs) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

/** A fetcher whose fleet callers may reach 127.0.0.2 and nothing else that is not public. */
const newFetcher = () =>
  new Fetcher({
    policy: new AddressPolicy([ipaddr.parseCIDR('127.0.0.2/32')]),
    resolver,
    dns: { timeoutMs: 200, reuseMs: 0 },
  });

type Outcome = { addrs: string[] } | { status: number; code: string; message: string; unresolved?: boolean };

const outcome = (p: Promise<string[]>): Promise<Outcome> =>
  p.then(
    (addrs) => ({ addrs }),
    (e: SiftError & { unresolved?: boolean }) => ({
      status: e.status,
      code: e.code,
      message: e.message,
      ...(e.unresolved !== undefined && { unresolved: e.unresolved }),
    }),
  );

/** What a restricted caller is told of `host`: one sentence, whatever the reason. */
const hidden = (host: string, unresolved: boolean): Outcome => ({
  status: 403,
  code: 'blocked_address',
  message: `${host} is not reachable for this caller`,
  unresolved,
});

/** What a fleet caller is told of a name that resolves to an address it may not reach. */
const blocked = (host: string, ip: string): Outcome => ({
  status: 403,
  code: 'blocked_address',
  message: `${host} resolves to ${ip}, which this caller may not reach`,
});

const dnsError = (message: string): Outcome => ({ status: 502, code: 'dns_error', message });

/** Each host, what a fleet caller and what a restricted one are told. */
const CASES: [string, Outcome, Outcome][] = [
  ['127.0.0.3', blocked('127.0.0.3', '127.0.0.3'), hidden('127.0.0.3', false)],
  ['[::1]', blocked('[::1]', '::1'), hidden('[::1]', false)],
  ['private.test', blocked('private.test', '127.0.0.3'), hidden('private.test', false)],
  ['mixed.test', blocked('mixed.test', '127.0.0.3'), hidden('mixed.test', false)],
  ['allowed.test', { addrs: ['127.0.0.2'] }, hidden('allowed.test', false)],
  ['empty.test', dnsError('empty.test did not resolve (ENOTFOUND)'), hidden('empty.test', true)],
  ['nowhere.test', dnsError('nowhere.test did not resolve (ENOTFOUND)'), hidden('nowhere.test', true)],
  ['flaky.test', dnsError('flaky.test did not resolve (EAI_AGAIN)'), hidden('flaky.test', true)],
  ['silent.test', dnsError('silent.test did not resolve within 200 ms'), hidden('silent.test', true)],
  ['public.test', { addrs: ['93.184.215.14'] }, { addrs: ['93.184.215.14'] }],
  ['93.184.215.14', { addrs: ['93.184.215.14'] }, { addrs: ['93.184.215.14'] }],
  ['[2606:4700::1111]', { addrs: ['2606:4700::1111'] }, { addrs: ['2606:4700::1111'] }],
];

/**
 * The one address check (SPEC "One address check"), as the fetcher, its connections and the render
 * proxy's gate ask it, on a stub resolver: nothing here connects anywhere. A fleet caller is told
 * why (a private address, a name that does not resolve); a restricted caller is told the same
 * sentence for both.
 */
describe('the one address check', () => {
  let fetcher: Fetcher;
  let check: AddressCheck;
  const signal = new AbortController().signal;

  beforeAll(() => {
    fetcher = newFetcher();
    check = fetcher.addressCheck;
  });
  afterAll(() => fetcher.close());

  describe.each<[CallerClass, 1 | 2]>([
    ['fleet', 1],
    ['restricted', 2],
  ])('for a %s caller', (callerClass, column) => {
    const who = `${callerClass}:caller`;
    const wanted = (host: string) => CASES.find(([h]) => h === host)![column];

    it.each(CASES)('%s', async (host) => {
      const want = wanted(host);
      expect(await outcome(check.addresses(host, callerClass, who, signal))).toEqual(want);
      // The render proxy's gate asks the same check, and connects to the first address.
      const gate = renderGate(check, callerClass, who);
      const first = gate.address(host, signal).then((a) => [a]);
      expect(await outcome(first)).toEqual('addrs' in want ? { addrs: want.addrs.slice(0, 1) } : want);
    });

    it('a fetch is told what the check says, and connects nowhere it may not', async () => {
      for (const host of ['private.test', 'mixed.test', 'nowhere.test', 'empty.test']) {
        const fetching = fetcher.fetch(`http://${host}/`, { callerClass, timeoutMs: 2000 });
        const got = await outcome(fetching.then(() => ['fetched']));
        expect(got).toEqual(wanted(host));
      }
    });

    it("a connection's own lookup is checked the same way", async () => {
      const lookup = check.lookupFor(callerClass);
      const looked = (host: string) =>
        outcome(
          new Promise<string[]>((resolve, reject) =>
            lookup(host, { all: true }, (err, addrs) =>
              err ? reject(err) : resolve((addrs as LookupAddress[]).map((a) => a.address)),
            ),
          ),
        );
      for (const host of ['private.test', 'mixed.test', 'nowhere.test', 'empty.test', 'public.test']) {
        expect(await looked(host)).toEqual(wanted(host));
      }
    });
  });

  it('a restricted caller cannot tell a name that does not resolve from a private one', async () => {
    const shape = async (host: string) => {
      const e = (await check
        .addresses(host, 'restricted', 'r', signal)
        .catch((x: unknown) => x)) as SiftError;
      return [e.status, e.code, e.message.replace(host, 'H'), e.hint];
    };
    const internal = await shape('private.test');
    for (const host of ['nowhere.test', 'empty.test', 'flaky.test', 'silent.test'])
      expect(await shape(host)).toEqual(internal);
  });

  it("the caller's own abort passes as it is", async () => {
    const ac = new AbortController();
    const asking = check.addresses('silent.test', 'restricted', 'r', ac.signal);
    ac.abort(new DOMException('the fetch timed out', 'TimeoutError'));
    await expect(asking).rejects.toHaveProperty('name', 'TimeoutError');
  });
});
