import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ProfileBuilder, ProfkitError, resolveStack, type Profile } from '@profkit/core';
import {
  SymbolTable,
  applySymbolReply,
  formatSymbolRequest,
  locationsToSymbolize,
  parseNumSymbols,
  parseSymbolReply,
  parseSymbolRequest,
  symbolUrlFor,
  symbolizeRemote,
} from '../src/index.js';

// google/pprof internal/symbolz/symbolz_test.go TestSymbolzURL: every entry of its table.
const UPSTREAM_TABLE: [string, string][] = [
  ['http://host:8000/profilez', 'http://host:8000/symbolz'],
  ['http://host:8000/profilez?seconds=5', 'http://host:8000/symbolz'],
  ['http://host:8000/profilez?seconds=5&format=proto', 'http://host:8000/symbolz'],
  ['http://host:8000/heapz?format=legacy', 'http://host:8000/symbolz'],
  ['http://host:8000/debug/pprof/profile', 'http://host:8000/debug/pprof/symbol'],
  ['http://host:8000/debug/pprof/profile?seconds=10', 'http://host:8000/debug/pprof/symbol'],
  ['http://host:8000/debug/pprof/heap', 'http://host:8000/debug/pprof/symbol'],
  ['http://some.host:8080/some/deeper/path/debug/pprof/endpoint?param=value', 'http://some.host:8080/some/deeper/path/debug/pprof/symbol'],
  ['http://host:8000/pprof/profile', 'http://host:8000/pprof/symbol'],
  ['http://host:8000/pprof/profile?seconds=15', 'http://host:8000/pprof/symbol'],
  ['http://host:8000/pprof/heap', 'http://host:8000/pprof/symbol'],
  ['http://host:8000/debug/pprof/block', 'http://host:8000/debug/pprof/symbol'],
  ['http://host:8000/debug/pprof/trace?seconds=5', 'http://host:8000/debug/pprof/symbol'],
  ['http://host:8000/debug/pprof/mutex', 'http://host:8000/debug/pprof/symbol'],
  ['http://host/whatever/pprof/heap', 'http://host/whatever/pprof/symbol'],
  ['http://host/whatever/pprof/growth', 'http://host/whatever/pprof/symbol'],
  ['http://host/whatever/pprof/profile', 'http://host/whatever/pprof/symbol'],
  ['http://host/whatever/pprof/pmuprofile', 'http://host/whatever/pprof/symbol'],
  ['http://host/whatever/pprof/contention', 'http://host/whatever/pprof/symbol'],
];

describe('symbol URL derivation (google/pprof internal/symbolz)', () => {
  it.each(UPSTREAM_TABLE)('%s -> %s', (from, to) => {
    expect(symbolUrlFor(from)).toBe(to);
  });
  it('has no symbol URL for sources that are not http URLs with a host', () => {
    expect(symbolUrlFor('/tmp/file.heap')).toBe('');
    expect(symbolUrlFor('file:///tmp/x')).toBe('');
    expect(symbolUrlFor('not a url')).toBe('');
  });
  it('replaces the last element like Go (path.Clean(path + "/../symbol")), also after a trailing slash', () => {
    // path.Clean("/debug/pprof/" + "/../symbol"): the empty element is dropped, ".." removes "pprof".
    expect(symbolUrlFor('http://h/debug/pprof/')).toBe('http://h/debug/symbol');
    expect(symbolUrlFor('http://h/a//debug/pprof/heap')).toBe('http://h/a/debug/pprof/symbol');
  });
  it('keeps https and the port', () => {
    expect(symbolUrlFor('https://h:9/x/pprof/heap?a=1')).toBe('https://h:9/x/pprof/symbol');
  });
});

describe('symbol POST body', () => {
  it('is 0x-lowercase-hex joined by + in the given order, duplicates kept', () => {
    expect(formatSymbolRequest([0x824d061n, 0x824d1cfn, 0x824d061n, 0xffffffffffffffffn])).toBe('0x824d061+0x824d1cf+0x824d061+0xffffffffffffffff');
    expect(formatSymbolRequest([])).toBe('');
  });
  it('is parsed like Kudu: tokens without 0x or not hex are ignored, tokens echoed as given', () => {
    const got = parseSymbolRequest('0x0824d061+0X824D1CF+garbage+1234+0xzz+0x\n');
    expect(got).toEqual([
      { token: '0x0824d061', address: 0x824d061n },
      { token: '0X824D1CF', address: 0x824d1cfn },
    ]);
  });
  it('ignores addresses wider than 64 bits instead of misreading them', () => {
    expect(parseSymbolRequest('0x10000000000000000+0x0000000000000000001')).toEqual([{ token: '0x0000000000000000001', address: 1n }]);
  });
  it('bounds the number of addresses', () => {
    let err: unknown;
    try {
      parseSymbolRequest('0x1+0x2+0x3', 2);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProfkitError);
    expect((err as ProfkitError).code).toBe('PROFKIT_E_LIMIT');
    expect((err as ProfkitError).detail.option).toBe('maxSymbolAddresses');
  });
});

describe('symbol reply parsing', () => {
  it('accepts TAB and space separators, names with spaces, and skips unknown lines', () => {
    const text = '0x0824d061\tfoo::bar(int)\n0x824d1cf   baz qux\nnum_symbols: 2\n---\nbinary=prog\n0x1\t\n';
    expect(parseSymbolReply(text).map((e) => [e.address, e.name, e.line])).toEqual([
      [0x824d061n, 'foo::bar(int)', 1],
      [0x824d1cfn, 'baz qux', 2],
    ]);
  });
  it('accepts a final line without a newline (google/pprof drops it; optional)', () => {
    expect(parseSymbolReply('0x10\tmain\n0x20\tlast').map((e) => e.name)).toEqual(['main', 'last']);
    expect(parseSymbolReply('0x10\tmain\n0x20\tlast', { ignoreUnterminatedLastLine: true })).toEqual([{ address: 0x10n, name: 'main', line: 1 }]);
  });
  it('reads nothing from a Kudu num_symbols answer (no newline) and finds its count', () => {
    expect(parseSymbolReply('num_symbols: 1')).toEqual([]);
    expect(parseNumSymbols('num_symbols: 1')).toBe(1);
    expect(parseNumSymbols('num_symbols: 0\n')).toBe(0);
    expect(parseNumSymbols('symbols: 3')).toBeUndefined();
  });
  it('accepts CRLF line ends and leading zeros', () => {
    expect(parseSymbolReply('0x00000000004005d0\tmain\r\n')).toEqual([{ address: 0x4005d0n, name: 'main', line: 1 }]);
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

describe('applySymbolReply / locationsToSymbolize', () => {
  it('asks for unsymbolized addresses of symbolizable mappings only, in location order', () => {
    const p = unsymbolized();
    const rows = locationsToSymbolize(p);
    expect(rows.map((r) => p.locations['.address'][r])).toEqual([0x401000n, 0x402000n, 0x404000n]);
  });
  it('fills names, adds one function per name, marks the mapping, leaves the input alone', () => {
    const p = unsymbolized();
    const rows = locationsToSymbolize(p);
    const q = applySymbolReply(p, rows, parseSymbolReply('0x401000\tleaf_fn\n0x402000\tcaller_fn\n0x404000\tleaf_fn\n'));
    expect(resolveStack(q, 0).map((f) => f.name)).toEqual(['leaf_fn', 'caller_fn', 'already_named']);
    expect(resolveStack(q, 1).map((f) => [f.name, f.symbolized])).toEqual([
      ['0x7fff0100', false],
      ['leaf_fn', true],
      ['caller_fn', true],
    ]);
    expect(q.functions.name.filter((n) => n === 'leaf_fn')).toHaveLength(1);
    expect(Array.from(q['.mappings'].has_functions)).toEqual([1, 0]);
    // input unchanged
    expect(p.functions.name).toEqual(['already_named']);
    expect(resolveStack(p, 0)[0]!.symbolized).toBe(false);
  });
  it('leaves locations the reply does not name unsymbolized', () => {
    const p = unsymbolized();
    const q = applySymbolReply(p, locationsToSymbolize(p), parseSymbolReply('0x402000\tonly_this\n'));
    expect(resolveStack(q, 0).map((f) => f.symbolized)).toEqual([false, true, true]);
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
