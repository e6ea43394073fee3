/**
 * Remote symbolization over HTTP in this adapter. The protocol primitives (URL derivation with
 * google/pprof's table, POST body, reply grammar, applying a reply) moved to @profkit/core and
 * are tested there (packages/core/test/symbolz.test.ts); here: that this package still exports
 * them, the server-side SymbolTable, and symbolizeRemote against a real HTTP server.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import * as core from '@profkit/core/node';
import { ProfileBuilder, resolveStack, type Profile } from '@profkit/core/node';
import * as pkg from '../src/node.js';
import { SymbolTable, applySymbolReply, locationsToSymbolize, parseSymbolReply, symbolizeRemote } from '../src/node.js';

describe('the protocol functions are core\'s, still exported by this package', () => {
  it.each(['symbolUrlFor', 'formatSymbolRequest', 'parseSymbolRequest', 'parseSymbolReply', 'parseNumSymbols', 'isUnsymbolizableMapping', 'locationsToSymbolize', 'applySymbolReply'] as const)('%s', (name) => {
    expect(typeof pkg[name]).toBe('function');
    expect(pkg[name]).toBe(core[name]);
  });
});

/** A profile with two unsymbolized addresses in a mapping, one named location, one in [vdso]. */
function unsymbolized(): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const m = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x500000n, filename: '/opt/app' });
  const vdso = b.internMapping({ memoryStart: 0x7fff0000n, memoryLimit: 0x7fff1000n, filename: '[vdso]' });
  const named = b.internFunction({ name: 'already_named' });
  const l1 = b.addLocation({ address: 0x401000n, mappingId: m });
  const l2 = b.addLocation({ address: 0x402000n, mappingId: m });
  const l3 = b.addLocation({ address: 0x403000n, mappingId: m, functionId: named });
  const l4 = b.addLocation({ address: 0x7fff0100n, mappingId: vdso });
  const l5 = b.addLocation({ address: 0x404000n, mappingId: m });
  b.addSample([l1, l2, l3], [3]);
  b.addSample([l4, l5, l2], [4]);
  return b.build();
}

describe('SymbolTable answers feed applySymbolReply (both sides of the wire in this package)', () => {
  it('a profile symbolized by another profile\'s table gets its names', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const leaf = b.internFunction({ name: 'leaf_fn' });
    const caller = b.internFunction({ name: 'caller_fn' });
    b.addSample([b.addLocation({ address: 0x401000n, functionId: leaf }), b.addLocation({ address: 0x402000n, functionId: caller })], [1]);
    const table = new SymbolTable().add(b.build());
    const p = unsymbolized();
    const rows = locationsToSymbolize(p);
    const body = pkg.formatSymbolRequest(rows.map((r) => p.locations['.address'][r]!));
    const q = applySymbolReply(p, rows, parseSymbolReply(table.reply(body)));
    expect(resolveStack(q, 0).map((f) => f.name)).toEqual(['leaf_fn', 'caller_fn', 'already_named']);
    expect(resolveStack(q, 1).map((f) => f.symbolized)).toEqual([false, false, true]);
  });
});

describe('SymbolTable (server side)', () => {
  it('answers with the token as given, a TAB and the innermost function name; omits unknown addresses', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const f = b.internFunction({ name: 'alpha' });
    const g = b.internFunction({ name: 'beta' });
    const l1 = b.addLocation({ address: 0x1000n, functionId: f });
    const l2 = b.addLocation({ address: 0x2000n, functionId: g });
    b.addSample([l1, l2], [1]);
    const t = new SymbolTable().add(b.build());
    expect(t.size).toBe(2);
    expect(t.reply('0x0000000000001000+0x2000+0x3000+junk')).toBe('0x0000000000001000\talpha\n0x2000\tbeta\n');
    // An unadjusted return address (address + 1) is answered too.
    expect(t.reply('0x2001')).toBe('0x2001\tbeta\n');
  });
});

interface Seen {
  method: string;
  url: string;
  contentType: string;
  body: string;
}

async function withSymbolServer(reply: string, fn: (base: string, seen: Seen[]) => Promise<void>): Promise<void> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, contentType: String(req.headers['content-type']), body: Buffer.concat(chunks).toString() });
      if (req.url === '/missing/pprof/symbol') {
        res.statusCode = 404;
        res.end('nope');
        return;
      }
      res.setHeader('content-type', 'text/plain');
      res.end(reply);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen);
  } finally {
    await new Promise<void>((ok) => server.close(() => ok()));
  }
}

describe('symbolizeRemote', () => {
  it('POSTs the addresses to the derived URL and fills the names from the reply', async () => {
    await withSymbolServer('num_symbols: 1\n0x401000\tleaf_fn\n0x402000 caller_fn\n0x404000\tlast_fn_no_newline', async (base, seen) => {
      const p = unsymbolized();
      const q = await symbolizeRemote(p, `${base}/app/pprof/heap?x=1`);
      expect(seen).toEqual([{ method: 'POST', url: '/app/pprof/symbol', contentType: 'application/octet-stream', body: '0x401000+0x402000+0x404000' }]);
      expect(resolveStack(q, 0).map((f) => f.name)).toEqual(['leaf_fn', 'caller_fn', 'already_named']);
      // The final line had no newline: still read.
      expect(resolveStack(q, 1)[1]!.name).toBe('last_fn_no_newline');
    });
  });
  it('sends nothing when every location has a function', async () => {
    await withSymbolServer('', async (base, seen) => {
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
      b.addSample([b.addLocation({ address: 1n, functionId: b.internFunction({ name: 'f' }) })], [1]);
      const p = b.build();
      expect(await symbolizeRemote(p, `${base}/pprof/heap`)).toBe(p);
      expect(seen).toEqual([]);
    });
  });
  it('fails with PROFKIT_E_NETWORK on a non-200 answer', async () => {
    await withSymbolServer('', async (base) => {
      await expect(symbolizeRemote(unsymbolized(), `${base}/missing/pprof/heap`)).rejects.toMatchObject({ code: 'PROFKIT_E_NETWORK', detail: { status: 404 } });
    });
  });
  it('fails with PROFKIT_E_USAGE when no symbol URL can be derived', async () => {
    await expect(symbolizeRemote(unsymbolized(), 'file.heap')).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE' });
  });
});
