/**
 * Redirects of the `/pprof/symbol` POST (`symbolize --remote`) follow core's rules, like
 * `profkit fetch` (issue 15 item 6): at most 10, http(s) only, on the endpoint's host unless
 * allowed. fetch's own redirect following allowed any host and 20 hops.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { symbolizeRemoteAddresses } from '../src/index.js';

let server: Server;
let port = 0;
let base = '';
let hits = new Map<string, number>();
let posts: { path: string; method: string; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const redirect = (status: number, location: string) => {
        res.writeHead(status, { location });
        res.end();
      };
      if (path === '/loop/pprof/symbol') return redirect(307, '/loop/pprof/symbol');
      if (path === '/file/pprof/symbol') return redirect(307, 'file:///etc/passwd');
      if (path === '/cross/pprof/symbol') return redirect(307, `http://localhost:${port}/named/pprof/symbol`);
      if (path === '/same/pprof/symbol') return redirect(307, '/named/pprof/symbol');
      if (path === '/named/pprof/symbol') {
        posts.push({ path, method: req.method!, body });
        return res.end(body.split('+').map((a) => `${a}\tfn_${a}\n`).join(''));
      }
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

function reset(): void {
  hits = new Map();
  posts = [];
}

describe('symbolizeRemoteAddresses: redirects', () => {
  it('a same-host 307 is followed with the POST body', async () => {
    reset();
    const names = await symbolizeRemoteAddresses(`${base}/same/pprof/symbol`, [0x10n, 0x20n]);
    expect(posts).toEqual([{ path: '/named/pprof/symbol', method: 'POST', body: '0x10+0x20' }]);
    expect([...names]).toEqual([
      [0x10n, 'fn_0x10'],
      [0x20n, 'fn_0x20'],
    ]);
  });

  it('a redirect to another host is refused unless allowed (fetch followed it silently)', async () => {
    reset();
    await expect(symbolizeRemoteAddresses(`${base}/cross/pprof/symbol`, [0x10n])).rejects.toMatchObject({
      code: 'PROFKIT_E_NETWORK',
      message: expect.stringContaining(`localhost:${port} is another host than 127.0.0.1:${port}`),
    });
    expect(posts).toEqual([]);
    const names = await symbolizeRemoteAddresses(`${base}/cross/pprof/symbol`, [0x10n], { allowRedirectHosts: ['localhost'] });
    expect(names.get(0x10n)).toBe('fn_0x10');
  });

  it('a loop stops after 10 redirects (fetch went to 20)', async () => {
    reset();
    await expect(symbolizeRemoteAddresses(`${base}/loop/pprof/symbol`, [0x10n])).rejects.toMatchObject({
      code: 'PROFKIT_E_NETWORK',
      detail: { rule: 'at most 10 redirects are followed' },
    });
    expect(hits.get('/loop/pprof/symbol')).toBe(11);
  });

  it('file:// is refused by the rule, naming the location', async () => {
    await expect(symbolizeRemoteAddresses(`${base}/file/pprof/symbol`, [0x10n])).rejects.toMatchObject({
      code: 'PROFKIT_E_NETWORK',
      detail: { location: 'file:///etc/passwd', rule: 'redirects may only lead to http or https URLs' },
    });
  });
});
