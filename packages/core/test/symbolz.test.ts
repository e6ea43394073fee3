/** The symbol-server protocol primitives (core `symbolz.ts`), shared by gperftools-heap and symbolize. */

import { describe, expect, it } from 'vitest';
import {
  ProfileBuilder,
  ProfkitError,
  applySymbolReply,
  applySymbolReplyCounted,
  chunkSymbolRequests,
  formatSymbolReply,
  formatSymbolRequest,
  isUnsymbolizableMapping,
  locationsToSymbolize,
  parseNumSymbols,
  parseSymbolReply,
  parseSymbolRequest,
  resolveSymbolUrl,
  resolveStack,
  symbolReplyMap,
  symbolUrlFor,
  symbolizeWithServer,
  validate,
  type Profile,
} from '../src/node/index.js';

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

describe('symbolUrlFor (google/pprof internal/symbolz)', () => {
  it.each(UPSTREAM_TABLE)('%s -> %s', (from, to) => {
    expect(symbolUrlFor(from)).toBe(to);
  });
  it('has no symbol URL for sources that are not http URLs with a host', () => {
    expect(symbolUrlFor('/tmp/file.heap')).toBe('');
    expect(symbolUrlFor('file:///tmp/x')).toBe('');
    expect(symbolUrlFor('not a url')).toBe('');
    expect(symbolUrlFor('ftp://host/pprof/heap')).toBe('');
  });
  it('replaces the last element like Go (path.Clean(path + "/../symbol")), also after a trailing slash', () => {
    // path.Clean("/debug/pprof/" + "/../symbol"): the empty element is dropped, ".." removes "pprof".
    expect(symbolUrlFor('http://h/debug/pprof/')).toBe('http://h/debug/symbol');
    expect(symbolUrlFor('http://h/a//debug/pprof/heap')).toBe('http://h/a/debug/pprof/symbol');
  });
  it('keeps https and the port; any other path becomes /symbolz at the host root', () => {
    expect(symbolUrlFor('https://h:9/x/pprof/heap?a=1')).toBe('https://h:9/x/pprof/symbol');
    expect(symbolUrlFor('http://h/a/b/profilez?seconds=5')).toBe('http://h/symbolz');
  });
});

describe('resolveSymbolUrl (what users type: --remote, --symbol-server)', () => {
  const cases: [string, string][] = [
    // google/pprof treats host:port/path without a scheme as http
    ['host:8080/debug/pprof/heap', 'http://host:8080/debug/pprof/symbol'],
    ['localhost:8080/pprof/profile?seconds=5', 'http://localhost:8080/pprof/symbol'],
    ['https+insecure://host/pprof/heap', 'https://host/pprof/symbol'],
    // already a symbol service: used as is (google/pprof would turn /x/pprof/symbol into /symbolz)
    ['http://host/x/pprof/symbol', 'http://host/x/pprof/symbol'],
    ['http://host/x/pprof/symbol?junk=1', 'http://host/x/pprof/symbol'],
    ['http://host:9/symbolz', 'http://host:9/symbolz'],
    ['http://host/debug/pprof/symbol', 'http://host/debug/pprof/symbol'],
    ['https://host/debug/pprof/profile?seconds=5', 'https://host/debug/pprof/symbol'],
    ['http://host/profilez?seconds=5', 'http://host/symbolz'],
  ];
  it.each(cases)('%s -> %s', (from, to) => expect(resolveSymbolUrl(from)).toBe(to));
  it('agrees with symbolUrlFor on the upstream table', () => {
    for (const [from, to] of UPSTREAM_TABLE) expect(resolveSymbolUrl(from)).toBe(to);
  });
  it('refuses other schemes and non-URLs with PROFKIT_E_USAGE naming the input', () => {
    for (const bad of ['ftp://host/pprof/heap', 'file:///tmp/x.heap', 'http://', '']) {
      let err: unknown;
      try {
        resolveSymbolUrl(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(ProfkitError);
      expect((err as ProfkitError).code).toBe('PROFKIT_E_USAGE');
      expect((err as ProfkitError).detail.url).toBe(bad);
    }
  });
});

describe('symbol POST body', () => {
  it('is 0x-lowercase-hex joined by + in the given order, duplicates kept', () => {
    expect(formatSymbolRequest([0x824d061n, 0x824d1cfn, 0x824d061n, 0xffffffffffffffffn])).toBe('0x824d061+0x824d1cf+0x824d061+0xffffffffffffffff');
    expect(formatSymbolRequest([])).toBe('');
  });
  it('refuses values that are not uint64', () => {
    expect(() => formatSymbolRequest([1n << 64n])).toThrow(expect.objectContaining({ code: 'PROFKIT_E_RANGE' }));
    expect(() => formatSymbolRequest([-1n])).toThrow(expect.objectContaining({ code: 'PROFKIT_E_RANGE' }));
  });
  it('is chunked into bodies of at most N addresses, in order', () => {
    expect(chunkSymbolRequests([1n, 2n, 3n, 4n, 5n], 2)).toEqual(['0x1+0x2', '0x3+0x4', '0x5']);
    expect(chunkSymbolRequests([], 2)).toEqual([]);
    expect(() => chunkSymbolRequests([1n], 0)).toThrow(expect.objectContaining({ code: 'PROFKIT_E_USAGE' }));
  });
  it('is parsed like Kudu: tokens without 0x or not hex are ignored, tokens echoed as given', () => {
    expect(parseSymbolRequest('0x0824d061+0X824D1CF+garbage+1234+0xzz+0x\n')).toEqual([
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
    const text = '0x0824d061\tfoo::bar(int)\n0x824d1cf   baz qux\nnum_symbols: 2\n---\nbinary=prog\n%warn x\n0x1\t\n';
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
  it('accepts CRLF line ends, leading zeros and trailing blanks', () => {
    expect(parseSymbolReply('0x00000000004005d0\tmain \r\n')).toEqual([{ address: 0x4005d0n, name: 'main', line: 1 }]);
  });
  it('ignores an address longer than 64 bits rather than truncating it', () => {
    expect(parseSymbolReply('0x12345678901234567\tx\n')).toEqual([]);
  });
  it('maps addresses to names, a later line winning (google/pprof)', () => {
    expect([...symbolReplyMap(parseSymbolReply('0x1\ta\n0x2\tb\n0x1\tc\n'))]).toEqual([
      [1n, 'c'],
      [2n, 'b'],
    ]);
  });
});

describe('formatSymbolReply (server side)', () => {
  it('echoes each token as given with a TAB and the name; unknown addresses and junk are omitted', () => {
    const names = new Map([
      [0x1000n, 'alpha'],
      [0x2000n, 'beta'],
    ]);
    expect(formatSymbolReply('0x0000000000001000+0x2000+0x3000+junk', (a) => names.get(a))).toBe('0x0000000000001000\talpha\n0x2000\tbeta\n');
  });
  it('never writes a name that would break the line grammar', () => {
    expect(formatSymbolReply('0x1', () => 'bad\nname')).toBe('');
  });
  it('round-trips through the client parser', () => {
    const names = new Map([
      [0xdeadn, 'ns::f(int)'],
      [0xbeefn, 'g'],
    ]);
    const reply = formatSymbolReply(formatSymbolRequest([0xdeadn, 0xbeefn, 0x1n]), (a) => names.get(a));
    expect(symbolReplyMap(parseSymbolReply(reply))).toEqual(names);
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
  const l6 = b.addLocation({ address: 0x900000n });
  b.addSample([l1, l2, l3], [3]);
  b.addSample([l4, l5, l2, l6], [4]);
  return b.build();
}

describe('locationsToSymbolize', () => {
  it('asks for unsymbolized addresses of symbolizable mappings and unmapped ones, in location order', () => {
    const p = unsymbolized();
    expect(locationsToSymbolize(p).map((r) => p.locations['.address'][r])).toEqual([0x401000n, 0x402000n, 0x404000n, 0x900000n]);
  });
  it('skips mappings marked has_functions unless forced (boolean or option)', () => {
    const p = unsymbolized();
    const marked = { ...p, '.mappings': { ...p['.mappings'], has_functions: Uint8Array.of(1, 0) } };
    expect(locationsToSymbolize(marked).map((r) => p.locations['.address'][r])).toEqual([0x900000n]);
    expect(locationsToSymbolize(marked, true)).toHaveLength(4);
    expect(locationsToSymbolize(marked, { force: true })).toHaveLength(4);
  });
  it('can be restricted to some mappings (0 = unmapped)', () => {
    const p = unsymbolized();
    expect(locationsToSymbolize(p, { mappingIds: [0] }).map((r) => p.locations['.address'][r])).toEqual([0x900000n]);
  });
  it('skips locations that already have lines, even when only inline lines name a function', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const f = b.internFunction({ name: 'inl' });
    const g = b.internFunction({ name: 'outer' });
    const withLines = b.addLocation({ address: 0x10n, functionId: f, line: 3, inlinedInto: [{ functionId: g, line: 7 }] });
    b.addSample([withLines, b.addLocation({ address: 0x20n })], [1]);
    const built = b.build();
    // profile.proto allows a Line without a function: the innermost line has none, its caller has one.
    const fid = built.locations.function_id.slice();
    fid[0] = 0;
    const p = { ...built, locations: { ...built.locations, function_id: fid } };
    expect(locationsToSymbolize(p).map((r) => p.locations['.address'][r])).toEqual([0x20n]);
  });
  it('knows google/pprof\'s unsymbolizable mappings', () => {
    expect(['[vdso]', '[vsyscall]', '/x/linux-vdso.so.1', '/dev/dri/card0'].every(isUnsymbolizableMapping)).toBe(true);
    expect(['/opt/app', '/lib/libc.so.6', ''].some(isUnsymbolizableMapping)).toBe(false);
  });
});

describe('applySymbolReply', () => {
  it('fills names, adds one function per name, marks the mapping, leaves the input alone', () => {
    const p = unsymbolized();
    const rows = locationsToSymbolize(p);
    const q = applySymbolReply(p, rows, parseSymbolReply('0x401000\tleaf_fn\n0x402000\tcaller_fn\n0x404000\tleaf_fn\n0x900000\tunmapped_fn\n'));
    expect(validate(q).ok).toBe(true);
    expect(resolveStack(q, 0).map((f) => f.name)).toEqual(['leaf_fn', 'caller_fn', 'already_named']);
    expect(resolveStack(q, 1).map((f) => [f.name, f.symbolized, f.line])).toEqual([
      ['0x7fff0100', false, 0],
      ['leaf_fn', true, 0],
      ['caller_fn', true, 0],
      ['unmapped_fn', true, 0],
    ]);
    expect(q.functions.name.filter((n) => n === 'leaf_fn')).toHaveLength(1);
    expect(q.functions.system_name).toEqual(q.functions.name);
    expect(Array.from(q['.mappings'].has_functions)).toEqual([1, 0]);
    // input unchanged
    expect(p.functions.name).toEqual(['already_named']);
    expect(resolveStack(p, 0)[0]!.symbolized).toBe(false);
    expect(Array.from(p['.mappings'].has_functions)).toEqual([0, 0]);
  });
  it('reuses an existing function with just that name', () => {
    const p = unsymbolized();
    const q = applySymbolReply(p, locationsToSymbolize(p), new Map([[0x401000n, 'already_named']]));
    expect(q.functions.name).toEqual(['already_named']);
    expect(resolveStack(q, 0).map((f) => f.name)).toEqual(['already_named', '0x402000', 'already_named']);
  });
  it('leaves locations the reply does not name unsymbolized, and counts what it named', () => {
    const p = unsymbolized();
    const r = applySymbolReplyCounted(p, locationsToSymbolize(p), parseSymbolReply('0x402000\tonly_this\n0x123\tnot_asked\n'));
    expect(r.named).toBe(1);
    expect(resolveStack(r.profile, 0).map((f) => f.symbolized)).toEqual([false, true, true]);
    expect(applySymbolReplyCounted(p, locationsToSymbolize(p), []).profile).toBe(p);
  });
  it('refuses rows outside the locations table', () => {
    expect(() => applySymbolReply(unsymbolized(), [99], [])).toThrow(expect.objectContaining({ code: 'PROFKIT_E_RANGE' }));
  });
});

describe('symbolizeWithServer (caller-supplied transport)', () => {
  it('posts the asked addresses in chunks to the symbol URL and applies every reply', async () => {
    const calls: [string, string][] = [];
    const names = new Map([
      [0x401000n, 'a'],
      [0x404000n, 'b'],
      [0x900000n, 'c'],
    ]);
    const post = async (url: string, body: string) => {
      calls.push([url, body]);
      return formatSymbolReply(body, (x) => names.get(x));
    };
    const p = unsymbolized();
    const r = await symbolizeWithServer(p, 'http://h/pprof/symbol', post, { maxAddressesPerRequest: 3 });
    expect(calls).toEqual([
      ['http://h/pprof/symbol', '0x401000+0x402000+0x404000'],
      ['http://h/pprof/symbol', '0x900000'],
    ]);
    expect(r.asked).toBe(4);
    expect(r.named).toBe(3);
    expect(resolveStack(r.profile, 1).map((f) => f.name)).toEqual(['0x7fff0100', 'b', '0x402000', 'c']);
  });
  it('sends nothing when nothing needs a name', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    b.addSample([b.addLocation({ address: 1n, functionId: b.internFunction({ name: 'f' }) })], [1]);
    const p = b.build();
    let called = false;
    const r = await symbolizeWithServer(p, 'http://h/symbolz', async () => {
      called = true;
      return '';
    });
    expect(called).toBe(false);
    expect(r.profile).toBe(p);
  });
  it('passes transport errors through', async () => {
    await expect(
      symbolizeWithServer(unsymbolized(), 'http://h/symbolz', async () => {
        throw new ProfkitError('PROFKIT_E_NETWORK', 'down');
      }),
    ).rejects.toMatchObject({ code: 'PROFKIT_E_NETWORK' });
  });
});
