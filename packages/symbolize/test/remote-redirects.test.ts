/**
 * Redirects of the `/pprof/symbol` POST (`symbolize --remote`) follow core's rules, like
 * `profkit fetch` (issue 15 item 6): at most 10, http(s) only, on the endpoint's host unless
 * allowed. fetch's own redirect following allowed any host and 20 hops.
 */
import { startRedirectTestServer, type RedirectTestServer } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { symbolizeRemoteAddresses } from '../src/index.js';

let srv: RedirectTestServer;
beforeAll(async () => {
  srv = await startRedirectTestServer('');
});
afterAll(() => srv.close());

describe('symbolizeRemoteAddresses: redirects', () => {
  it('a same-host 307 is followed with the POST body', async () => {
    srv.reset();
    const names = await symbolizeRemoteAddresses(`${srv.base}/same/pprof/symbol`, [0x10n, 0x20n]);
    expect(srv.symbolPosts).toEqual([{ path: '/ok/pprof/symbol', method: 'POST', body: '0x10+0x20' }]);
    expect([...names]).toEqual([
      [0x10n, 'fn_0x10'],
      [0x20n, 'fn_0x20'],
    ]);
  });

  it('a redirect to another host is refused unless allowed (fetch followed it silently)', async () => {
    srv.reset();
    await expect(symbolizeRemoteAddresses(`${srv.base}/cross/pprof/symbol`, [0x10n])).rejects.toMatchObject({
      code: 'PROFKIT_E_NETWORK',
      message: expect.stringContaining(`localhost:${srv.port} is another host than 127.0.0.1:${srv.port}`),
    });
    expect(srv.symbolPosts).toEqual([]);
    const names = await symbolizeRemoteAddresses(`${srv.base}/cross/pprof/symbol`, [0x10n], { allowRedirectHosts: ['localhost'] });
    expect(names.get(0x10n)).toBe('fn_0x10');
  });

  it('a loop stops after 10 redirects (fetch went to 20)', async () => {
    srv.reset();
    await expect(symbolizeRemoteAddresses(`${srv.base}/loop/pprof/symbol`, [0x10n])).rejects.toMatchObject({
      code: 'PROFKIT_E_NETWORK',
      detail: { rule: 'at most 10 redirects are followed' },
    });
    expect(srv.hits.get('/loop/pprof/symbol')).toBe(11);
  });

  it('file:// is refused by the rule, naming the location', async () => {
    await expect(symbolizeRemoteAddresses(`${srv.base}/file/pprof/symbol`, [0x10n])).rejects.toMatchObject({
      code: 'PROFKIT_E_NETWORK',
      detail: { location: 'file:///etc/passwd', rule: 'redirects may only lead to http or https URLs' },
    });
  });
});
