/** The /pprof/symbol remote protocol: endpoint derivation, reply parsing, and a real HTTP server. */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, assertValid, resolveStack } from '@profkit/core/node';
import { parseSymbolReply, symbolize, symbolizeRemoteAddresses, symbolzURL } from '../src/index.js';

// Expected endpoints are literals from google/pprof's rules (internal/symbolz `symbolz()` and its
// TestSymbolzURL table), plus the user-facing forms documented in docs/symbolization.md.
// @profkit/core tests the full table on resolveSymbolUrl (packages/core/test/symbolz.test.ts);
// these check that the symbolizer's entry point follows the same rules.
describe('symbolzURL: google/pprof endpoint rules', () => {
  const cases: [string, string][] = [
    // google/pprof internal/symbolz/symbolz_test.go TestSymbolzURL
    ['http://host:8000/profilez', 'http://host:8000/symbolz'],
    ['http://host:8000/profilez?seconds=5', 'http://host:8000/symbolz'],
    ['http://host:8000/profilez?seconds=5&format=proto', 'http://host:8000/symbolz'],
    ['http://host:8000/heapz?format=legacy', 'http://host:8000/symbolz'],
    ['http://host:8000/debug/pprof/profile', 'http://host:8000/debug/pprof/symbol'],
    ['http://host:8000/debug/pprof/profile?seconds=10', 'http://host:8000/debug/pprof/symbol'],
    ['http://host:8000/debug/pprof/heap', 'http://host:8000/debug/pprof/symbol'],
    // gperftools suffixes (pprof's hasGperftoolsSuffix): the last element becomes `symbol`
    ['http://host/whatever/pprof/growth', 'http://host/whatever/pprof/symbol'],
    ['http://host/x/pprof/contention', 'http://host/x/pprof/symbol'],
    // any other path: /symbolz at the host root
    ['http://host/a/profilez', 'http://host/symbolz'],
    // user-facing extras: no scheme → http, a symbol URL is kept (without its query)
    ['host:8080/debug/pprof/heap', 'http://host:8080/debug/pprof/symbol'],
    ['http://host/x/pprof/symbol?x=1', 'http://host/x/pprof/symbol'],
    ['https+insecure://host:443/pprof/heap', 'https://host/pprof/symbol'],
  ];
  for (const [src, want] of cases) it(`${src} → ${want}`, () => expect(symbolzURL(src)).toBe(want));
  it('a non-http scheme is a usage error', () => {
    expect(() => symbolzURL('ftp://host/pprof/heap')).toThrow(expect.objectContaining({ code: 'PROFKIT_E_USAGE' }));
  });
});

describe('parseSymbolReply', () => {
  it('TAB or spaces, leading zeros, junk lines, a last line without newline', () => {
    const m = parseSymbolReply('num_symbols: 1\n0x0000000000401000\tmain\n0x401010   leaf_fn\n---\nbinary=/bin/x\n%warn hi\n0x401020\t_ZN2ns1fEv');
    expect([...m.entries()]).toEqual([
      [0x401000n, 'main'],
      [0x401010n, 'leaf_fn'],
      [0x401020n, '_ZN2ns1fEv'],
    ]);
  });
  it('a later line for the same address wins (google/pprof)', () => {
    expect([...parseSymbolReply('0x10\tfirst\n0x10\tsecond\n').entries()]).toEqual([[0x10n, 'second']]);
  });
  it('an address longer than 64 bits is ignored, not truncated', () => {
    expect(parseSymbolReply('0x12345678901234567\tx\n').size).toBe(0);
  });
});

interface Seen {
  method: string;
  url: string;
  type: string;
  body: string;
}

describe('against a /pprof/symbol server', () => {
  let server: Server;
  let base = '';
  const seen: Seen[] = [];
  const names = new Map<bigint, string>([
    [0x401000n, 'main'],
    [0x401234n, '_ZNK2ns6Widget7computeEi'],
  ]);
  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, type: String(req.headers['content-type']), body });
        if (req.url === '/broken/pprof/symbol') {
          res.writeHead(500, { 'Content-Type': 'text/plain' }).end('symbolizer crashed');
          return;
        }
        if (req.url === '/slow/pprof/symbol') return; // never answers
        // Kudu-like: echo each token as given, TAB, the name; unknown addresses omitted.
        const out = body
          .split('+')
          .filter((t) => t.startsWith('0x') && names.has(BigInt(t)))
          .map((t) => `${t}\t${names.get(BigInt(t))}\n`)
          .join('');
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end(out);
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
  });

  function profile() {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const m = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x500000n, filename: '/not/here/prog' });
    b.addSample([0x401234n, 0x401000n, 0x409999n].map((a) => b.internLocation({ address: a, mappingId: m })), [1]);
    return b.build();
  }

  it('POSTs the addresses in location order and names what the server knows (demangled)', async () => {
    seen.length = 0;
    const { profile: out, reports } = await symbolize(profile(), { remote: `${base}/pprof/heap`, searchPath: [] });
    assertValid(out);
    expect(seen).toEqual([{ method: 'POST', url: '/pprof/symbol', type: 'application/octet-stream', body: '0x401234+0x401000+0x409999' }]);
    expect(resolveStack(out, 0).map((f) => [f.name, f.systemName, f.symbolized])).toEqual([
      ['ns::Widget::compute', '_ZNK2ns6Widget7computeEi', true],
      ['main', 'main', true],
      ['0x409999', '', false],
    ]);
    expect(reports.map((r) => r.status)).toEqual(['missing-binary', 'remote']);
    expect(reports[1]!.symbolized).toBe(2);
    expect(out['.mappings'].has_functions[0]).toBe(1);
    expect(out['.mappings'].has_filenames[0]).toBe(0);
  });

  it('chunks large requests', async () => {
    seen.length = 0;
    const got = await symbolizeRemoteAddresses(`${base}/pprof/symbol`, [0x401000n, 0x1n, 0x401234n], { maxAddressesPerRequest: 2 });
    expect(seen.map((s) => s.body)).toEqual(['0x401000+0x1', '0x401234']);
    expect(got.size).toBe(2);
  });

  it('an HTTP error is reported per mapping with the status and body', async () => {
    const { reports, profile: out } = await symbolize(profile(), { remote: `${base}/broken/pprof/heap`, searchPath: [] });
    expect(reports[1]!.status).toBe('remote-failed');
    expect(reports[1]!.message).toContain('HTTP 500');
    expect(reports[1]!.message).toContain('symbolizer crashed');
    expect(out.locations.function_id.every((x) => x === 0)).toBe(true);
  });

  it('a server that never answers times out with PROFKIT_E_TIMEOUT', async () => {
    await expect(symbolizeRemoteAddresses(`${base}/slow/pprof/symbol`, [0x1n], { timeoutMs: 300 })).rejects.toMatchObject({ code: 'PROFKIT_E_TIMEOUT' });
  });

  it('keeps only the names of the addresses asked (a server answering others cannot grow the result)', async () => {
    const reply = Array.from({ length: 1000 }, (_, i) => `0x${(0x900000 + i).toString(16)}\tjunk_${i}\n`).join('') + '0x10\tasked\n';
    const fakeFetch = (async () => new Response(reply, { status: 200 })) as typeof fetch;
    const got = await symbolizeRemoteAddresses('http://127.0.0.1:1/pprof/symbol', [0x10n, 0x20n], { fetch: fakeFetch });
    expect([...got]).toEqual([[0x10n, 'asked']]);
  });

  it('a refused connection is PROFKIT_E_NETWORK', async () => {
    await expect(symbolizeRemoteAddresses('http://127.0.0.1:1/pprof/symbol', [0x1n], { timeoutMs: 2000 })).rejects.toMatchObject({ code: 'PROFKIT_E_NETWORK' });
  });
});
