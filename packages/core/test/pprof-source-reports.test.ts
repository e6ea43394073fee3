/**
 * `listReport` and `disasmReport` with the file access given to them (platform-neutral core: the
 * CLI reads files and runs objdump): which lines a listing shows and when it reads a file, and
 * how instructions get their samples. The byte-for-byte comparisons with `go tool pprof` are in
 * the CLI's pprof-source-interop and pprof-disasm-interop tests.
 */
import { describe, expect, it } from 'vitest';
import { MAX_SOURCE_FILE_LINES, ProfileBuilder, disasmReport, goPprofLoad, isProfkitError, listReport, listReportText, type ObjectFile, type Profile, type SourceLines } from '../src/index.js';

/** f (file /src/a.go, starting at line 10) sampled at lines 12 (5 ns) and 14 (2 ns); g (starting at 50) at line 3. */
async function profile(): Promise<Profile> {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const mapping = b.internMapping({ memoryStart: 0x1000n, memoryLimit: 0x2000n, filename: '/bin/prog' });
  const f = b.internFunction({ name: 'f', filename: '/src/a.go', startLine: 10 });
  const g = b.internFunction({ name: 'g', filename: '/src/a.go', startLine: 50 });
  const at = (functionId: number, line: number, address: bigint) => b.internLocation({ functionId, line, address, mappingId: mapping });
  b.addSample([at(f, 12, 0x1006n)], [5n]);
  b.addSample([at(f, 14, 0x100fn)], [2n]);
  b.addSample([at(g, 3, 0x1100n), at(f, 14, 0x100fn)], [1n]);
  return (await goPprofLoad(b.build())).profile;
}

const source = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);

describe('listReport', () => {
  it('from the start line to 5 lines after the last sampled line, each line with its values', async () => {
    const read: string[] = [];
    const rep = listReport(await profile(), { symbol: (n) => n === 'f', symbolText: '^f$', readSource: (file) => (read.push(file), { lines: source }) });
    expect(read).toEqual(['/src/a.go']);
    const [f] = rep.routines;
    expect(f!.lines.map((l) => l.line)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(f!.lines.filter((l) => l.cum !== 0n).map((l) => [l.line, l.flat, l.cum])).toEqual([
      [12, 5n, 5n],
      [14, 2n, 3n],
    ]);
    expect(rep.text).toContain('\n       5ns        5ns     12:line 12\n');
  });

  it('a start line after the sampled lines shows nothing and reads no file (as pprof)', async () => {
    const rep = listReport(await profile(), { symbol: (n) => n === 'g', symbolText: 'g', readSource: () => expect.unreachable('no file read') as SourceLines });
    expect(rep.routines).toEqual([{ name: 'g', file: '/src/a.go', flat: 1n, cum: 1n, lines: [] }]);
  });

  it('a file that cannot be read is reported in the listing', async () => {
    const rep = listReport(await profile(), { symbol: (n) => n === 'f', symbolText: 'f', readSource: () => ({ error: 'open /src/a.go: no such file or directory' }) });
    expect(rep.text).toMatch(/^ Error: open \/src\/a\.go: no such file or directory$/m);
    expect(rep.routines[0]!.error).toBe('open /src/a.go: no such file or directory');
  });

  it('no matching function is a usage error', async () => {
    const p = await profile();
    expect(() => listReport(p, { symbol: () => false, symbolText: 'zzz', readSource: () => ({ lines: [] }) })).toThrow(
      expect.objectContaining({ code: 'PROFKIT_E_USAGE', message: 'no matches found for regexp: zzz' }),
    );
  });
});

/** A file of `length` lines (none made until read), counting the lines read. */
function endlessSource(length: number): { lines: readonly string[]; read: () => number } {
  let reads = 0;
  const lines = new Proxy([] as string[], {
    get: (target, key) => (key === 'length' ? length : typeof key === 'string' && /^\d+$/.test(key) ? (reads++, '') : Reflect.get(target, key)),
  });
  return { lines, read: () => reads };
}

/** Function `far` (file /src/big.go, starting at `startLine`) sampled at `lines`. */
async function farProfile(startLine: number, lines: number[]): Promise<Profile> {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const far = b.internFunction({ name: 'far', filename: '/src/big.go', startLine });
  for (const line of lines) b.addSample([b.internLocation({ functionId: far, line })], [1n]);
  return (await goPprofLoad(b.build())).profile;
}

describe('listReport bounds', () => {
  it('lists no line past MAX_SOURCE_FILE_LINES, whatever readSource gives', async () => {
    // pprof's rows: from the start line, MAX - 10, to MAX + 25; the ones past MAX are not listed.
    const p = await farProfile(MAX_SOURCE_FILE_LINES - 10, [MAX_SOURCE_FILE_LINES + 20]);
    const file = endlessSource(2 ** 40);
    const rep = listReport(p, { symbol: (n) => n === 'far', symbolText: 'far', readSource: () => ({ lines: file.lines }) });
    expect(rep.routines[0]!.lines.map((l) => l.line)).toEqual(Array.from({ length: 11 }, (_, i) => MAX_SOURCE_FILE_LINES - 10 + i));
  });

  it('makes rows as it prints them: maxReportBytes stops the listing before the rows after it are read', async () => {
    const p = await farProfile(0, [1, 1_000_000]);
    const file = endlessSource(2_000_000);
    let error: unknown;
    try {
      listReport(p, { symbol: (n) => n === 'far', symbolText: 'far', readSource: () => ({ lines: file.lines }), limits: { maxReportBytes: 10_000 } });
    } catch (e) {
      error = e;
    }
    expect(isProfkitError(error) && error.detail.option).toBe('maxReportBytes');
    // Each row prints at least 30 bytes: no more than 10,000 / 30 rows (plus the one over) were read.
    expect(file.read()).toBeLessThanOrEqual(10_000 / 30 + 1);
  });
});

describe('listReportText', () => {
  it('is the text of listReport, piece by piece', async () => {
    const options = { symbol: (n: string) => n === 'f' || n === 'g', symbolText: 'f|g', readSource: () => ({ lines: source }) };
    const p = await profile();
    const pieces = [...listReportText(p, options)];
    expect(pieces.length).toBeGreaterThan(10);
    expect(pieces.join('')).toBe(listReport(p, options).text);
    expect(() => [...listReportText(p, { ...options, symbol: () => false })]).toThrow(expect.objectContaining({ code: 'PROFKIT_E_USAGE' }));
  });

  it('keeps no rows: only the text counts towards maxReportBytes; listReport counts the rows it keeps too', async () => {
    // About 1,000 rows of 30 bytes: 30 KB of text, and 100 KB more as kept rows.
    const p = await farProfile(0, [1, 1000]);
    const options = { symbol: (n: string) => n === 'far', symbolText: 'far', readSource: () => ({ lines: endlessSource(2000).lines }), limits: { maxReportBytes: 60_000 } };
    expect([...listReportText(p, options)].join('').split('\n').length).toBeGreaterThan(1000);
    let error: unknown;
    try {
      listReport(p, options);
    } catch (e) {
      error = e;
    }
    expect(isProfkitError(error) && error.detail.option).toBe('maxReportBytes');
    expect(listReport(p, { ...options, limits: { maxReportBytes: 200_000 } }).routines[0]!.lines.length).toBe(1005);
  });
});

describe('disasmReport', () => {
  it('samples go to the instruction they fall in, the symbol\'s last byte included', async () => {
    const asked: [bigint, bigint][] = [];
    const file: ObjectFile = {
      symbols: (matches) => [{ name: 'f', start: 0x1000n, end: 0x100fn }].filter((s) => matches(s.name)),
      objectAddress: (a) => a,
      disassemble: (start, end) => {
        asked.push([start, end]);
        return [
          { address: 0x1000n, text: 'push %rbp', function: 'f', file: '/src/a.go', line: 10 },
          { address: 0x1004n, text: 'mov $0x1,%eax', function: 'f', file: '/src/a.go', line: 12 },
          { address: 0x100fn, text: 'ret', function: 'f', file: '/src/a.go', line: 14 },
        ];
      },
    };
    const rep = disasmReport(await profile(), { symbol: (n) => n === 'f', symbolText: 'f', tool: { open: () => file } });
    expect(asked).toEqual([[0x1000n, 0x1010n]]);
    const [f] = rep.routines;
    expect([f!.flat, f!.cum]).toEqual([7n, 8n]);
    expect(f!.instructions.map((i) => [i.address, i.flat, i.cum])).toEqual([
      [0x1000n, 0n, 0n],
      [0x1004n, 5n, 5n],
      [0x100fn, 2n, 3n],
    ]);
    expect(rep.text).toContain('       2ns        3ns       100f: ret                                     ;f a.go:14\n');
  });

  it('an unreadable binary is named in the no-matches error', async () => {
    const p = await profile();
    expect(() => disasmReport(p, { symbol: () => true, symbolText: 'f', tool: { open: () => ({ error: 'open /bin/prog: no such file or directory' }) } })).toThrow(
      'no matches found for regexp: f (binaries not read: open /bin/prog: no such file or directory)',
    );
  });
});

describe('listReport with long names', () => {
  it('2,000 functions whose 20,000-character names differ only at the end are grouped by name (each listed once)', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    const names = Array.from({ length: 2000 }, (_, i) => 'x'.repeat(20_000) + String(i).padStart(6, '0'));
    for (const name of names) b.addSample([b.internLocation({ functionId: b.internFunction({ name, filename: '/src/a.go' }), line: 3 })], [1n]);
    const p = (await goPprofLoad(b.build())).profile;
    const rep = listReport(p, { symbol: () => true, symbolText: 'x', readSource: () => ({ error: 'not read' }) });
    expect(rep.routines.map((r) => r.name)).toEqual(names);
    // A Map hashes such strings by their length alone (one hash chain: 2,000² comparisons of
    // 20,000 characters): 71 s to group; keyed through StringKeyedMap, 4.5 s for the whole test
    // on a busy machine. The timeout is a bound, not a measurement.
  }, 20_000);
});
