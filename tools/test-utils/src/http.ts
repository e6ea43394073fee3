/**
 * A loopback HTTP server that redirects the way hostile or misconfigured profile servers do, for
 * the redirect tests of `profkit fetch` (`@profkit/gperftools-heap`) and of `symbolize --remote`
 * (`@profkit/symbolize`). The first path element chooses the behaviour, the rest is kept:
 *
 * | path | answer |
 * | --- | --- |
 * | `/loop/REST` | 307 to itself (a redirect loop) |
 * | `/badurl/REST` | 302 to `http://` (not a URL) |
 * | `/file/REST` | 302 to `file:///etc/passwd` |
 * | `/cross/REST` | 307 to `http://localhost:PORT/ok/REST`: the same server under another host name |
 * | `/same/REST` | 307 to `/ok/REST` |
 * | `/ok/…/symbol` (POST) | one line `<address>\tfn_<address>` per address of the body |
 * | `/ok/…` otherwise | `body` |
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RedirectTestServer {
  /** `http://127.0.0.1:PORT` */
  base: string;
  port: number;
  /** Requests per path since the last `reset`. */
  hits: Map<string, number>;
  /** Symbol POSTs that reached `/ok/…/symbol` since the last `reset`. */
  symbolPosts: { path: string; method: string; body: string }[];
  reset(): void;
  close(): Promise<void>;
}

export async function startRedirectTestServer(body: string): Promise<RedirectTestServer> {
  const state = { hits: new Map<string, number>(), symbolPosts: [] as RedirectTestServer['symbolPosts'] };
  let port = 0;
  const server = createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    state.hits.set(path, (state.hits.get(path) ?? 0) + 1);
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const [, kind = '', ...rest] = path.split('/');
      const tail = rest.join('/');
      const redirect = (status: number, location: string) => {
        res.writeHead(status, { location });
        res.end();
      };
      if (kind === 'loop') return redirect(307, path);
      if (kind === 'badurl') return redirect(302, 'http://');
      if (kind === 'file') return redirect(302, 'file:///etc/passwd');
      if (kind === 'cross') return redirect(307, `http://localhost:${port}/ok/${tail}`);
      if (kind === 'same') return redirect(307, `/ok/${tail}`);
      if (kind === 'ok' && path.endsWith('/symbol') && req.method === 'POST') {
        state.symbolPosts.push({ path, method: req.method, body: text });
        return res.end(text.split('+').map((a) => `${a}\tfn_${a}\n`).join(''));
      }
      if (kind === 'ok') return res.end(body);
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    get hits() {
      return state.hits;
    },
    get symbolPosts() {
      return state.symbolPosts;
    },
    reset() {
      state.hits = new Map();
      state.symbolPosts = [];
    },
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}
