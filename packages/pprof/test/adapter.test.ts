import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCodes, ProfileBuilder, checkAdapter, createRegistry, isProfkitError, type Profile } from '@profkit/core/node';
import adapter, { pprofAdapter, sniffPprof } from '../src/index.js';
import { encodeProfile, gzipLikeGo, kernelRelocationSymbol, serializePprof } from '../src/codec.js';
import { PROTO_FIXTURES, fixture, hasFixtures, meaning, pb, str } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'profkit-pprof-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function small(): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'alloc_space', unit: 'bytes' }, { type: 'inuse_space', unit: 'bytes' }] });
  const f = b.internFunction({ name: 'main', filename: 'main.go', startLine: 3 });
  const g = b.internFunction({ name: 'alloc', systemName: 'runtime.alloc', filename: 'alloc.go' });
  const l1 = b.addLocation({ address: 0x1234n, functionId: g, line: 9, inlinedInto: [{ functionId: f, line: 4 }] });
  const l2 = b.addLocation({ address: 0x2000n, functionId: f, line: 5 });
  b.addSample([l1, l2], [100n, -(2n ** 60n)], [{ key: 'thread', str: 'w1' }, { key: 'bytes', num: 64n, unit: 'bytes' }]);
  b.addSample([l2], [1n, 2n]);
  return b.build();
}

describe('adapter object', () => {
  it('is a valid adapter with format pprof and its extensions', () => {
    expect(adapter).toBe(pprofAdapter);
    checkAdapter(adapter);
    expect(adapter.name).toBe('pprof');
    expect(adapter.formats[0]!.id).toBe('pprof');
    expect(adapter.formats[0]!.extensions).toEqual(['.pb.gz', '.pprof', '.pb', '.prof']);
  });

  it('sniff: structural, never throws, rejects text and truncated garbage', () => {
    const raw = encodeProfile(small());
    expect(typeof sniffPprof(raw) === 'number' ? 0 : (sniffPprof(raw) as { score: number }).score).toBeGreaterThanOrEqual(0.8);
    const gz = gzipLikeGo(raw);
    const r = adapter.sniff(gz, { size: gz.length });
    expect(typeof r === 'number' ? r : r.score).toBeGreaterThanOrEqual(0.8);
    for (const text of ['heap profile: 1: 2 [3: 4] @ heapprofile\n', 'garbage text', '{"json": true}', '#!/bin/sh\n', 'main;foo;bar 12\n']) {
      const s = adapter.sniff(new TextEncoder().encode(text), {});
      expect(typeof s === 'number' ? s : s.score).toBe(0);
    }
    expect(adapter.sniff(new Uint8Array([0x1f, 0x8b]), {})).toBe(0);
    expect(adapter.sniff(new Uint8Array(0), {})).toBe(0);
    // A string table whose first entry is not empty is not a profile.
    const s = adapter.sniff(pb([[1, [[1, 1], [2, 2]]], [6, str('x')]]), { size: 10 });
    expect(typeof s === 'number' ? s : s.score).toBe(0);
  });
});

describe('through the core registry', () => {
  const reg = createRegistry([adapter]);

  it('writes gzip by default (Go header bytes), raw for .pb, and reads both back', async () => {
    const p = small();
    await reg.write(p, join(dir, 'a.pb.gz'));
    await reg.write(p, join(dir, 'a.pb'));
    await reg.write(p, join(dir, 'b.pprof'), { options: { compress: false } });
    const gz = readFileSync(join(dir, 'a.pb.gz'));
    expect(Array.from(gz.subarray(0, 10))).toEqual([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]);
    const raw = readFileSync(join(dir, 'a.pb'));
    expect(raw[0]).toBe(0x0a);
    expect(gunzipSync(gz).equals(raw)).toBe(true);
    expect(readFileSync(join(dir, 'b.pprof')).equals(raw)).toBe(true);
    for (const name of ['a.pb.gz', 'a.pb', 'b.pprof']) {
      const r = await reg.read(join(dir, name));
      expect(r.format).toBe('pprof');
      expect(meaning(r.profile)).toEqual(meaning(p));
    }
  });

  it('detects pprof content under a misleading name', async () => {
    writeFileSync(join(dir, 'profile.txt'), serializePprof(small()));
    const r = await reg.read(join(dir, 'profile.txt'));
    expect(r.format).toBe('pprof');
  });

  it('rejects a bad write option with USAGE', async () => {
    await expect(reg.write(small(), join(dir, 'x.pb.gz'), { options: { compress: 'yes' } })).rejects.toMatchObject({ code: ErrorCodes.USAGE });
  });

  it('names the file in read errors', async () => {
    const bad = join(dir, 'bad.pb');
    writeFileSync(bad, pb([[6, str('x')]]));
    try {
      await reg.read(bad, { format: 'pprof' });
      expect.unreachable();
    } catch (e) {
      expect(isProfkitError(e)).toBe(true);
      const err = e as { code: string; detail: { file?: string; offset?: number; rule?: string } };
      expect(err.code).toBe(ErrorCodes.PARSE);
      expect(err.detail.file).toBe(bad);
      expect(err.detail.offset).toBe(0);
      expect(err.detail.rule).toBe("string_table[0] must be ''");
    }
  });

  it.skipIf(!hasFixtures)('reads every proto fixture through detection', async () => {
    for (const rel of PROTO_FIXTURES) {
      const r = await reg.read(fixture(rel));
      expect(r.format).toBe('pprof');
      expect(r.gzipped).toBe(true);
    }
  });
});

describe('writer', () => {
  it('refuses ids that are zero or repeated', () => {
    const p = small();
    p.locations.location_id[1] = p.locations.location_id[0]!;
    expect(() => encodeProfile(p)).toThrow(/multiple locations with same id/);
    const q = small();
    q.functions.function_id[0] = 0;
    expect(() => encodeProfile(q)).toThrowError(expect.objectContaining({ code: ErrorCodes.INVALID_PROFILE }));
  });

  it('writes field 14 even when 0, omits an empty period type, packs > 2 comments', () => {
    const p = small();
    const raw = encodeProfile(p);
    expect(Array.from(raw.subarray(raw.length - 2))).toEqual([0x70, 0x00]);
    p['.profile'].comments = ['a', 'b', 'c'];
    p['.profile'].period_type = { type: '', unit: '' };
    const raw2 = encodeProfile(p);
    // comment indices packed: tag 0x6a, 3 bytes.
    expect(Buffer.from(raw2).indexOf(Buffer.from([0x6a, 0x03]))).toBeGreaterThan(0);
    expect(Buffer.from(raw2).indexOf(0x5a)).toBe(-1);
  });

  it('writes doc_url (field 15) and Line.column, and reads them back', async () => {
    const { decodeProfile } = await import('../src/codec.js');
    const p = small();
    p['.profile'].doc_url = 'https://example.com/doc';
    p.locations['.column'][1] = 17;
    const back = decodeProfile(encodeProfile(p)).profile;
    expect(back['.profile'].doc_url).toBe('https://example.com/doc');
    expect(back.locations['.column'][1]).toBe(17);
  });

  it('warns about format extensions it cannot carry', async () => {
    const p = small();
    p['.extensions'].rprof = { facts: { interval_us: 20000 } };
    const codec = await adapter.load!();
    const r = await codec.write!(p, { fileName: 'x.pb.gz' });
    expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_PPROF_EXTENSIONS_DROPPED']);
  });
});

describe('kernel relocation symbol', () => {
  it('is derived from a [kernel.kallsyms] mapping name and not persisted', () => {
    expect(kernelRelocationSymbol('[kernel.kallsyms]_text')).toBe('_text');
    expect(kernelRelocationSymbol('[kernel.kallsyms]')).toBe('');
    expect(kernelRelocationSymbol('/usr/lib/libc.so.6')).toBeUndefined();
    const p = small();
    p['.mappings'] = {
      mapping_id: new Uint32Array([1]),
      memory_start: new BigUint64Array([0xffffffff81000000n]),
      memory_limit: new BigUint64Array([0xffffffff82000000n]),
      file_offset: new BigUint64Array([0n]),
      filename: ['[kernel.kallsyms]_stext'],
      build_id: [''],
      has_functions: new Uint8Array([1]),
      has_filenames: new Uint8Array(1),
      has_line_numbers: new Uint8Array(1),
      has_inline_frames: new Uint8Array(1),
    };
    const raw = encodeProfile(p);
    // The name is written as it is (one string), nothing derived is added.
    expect(Buffer.from(raw).includes(Buffer.from('[kernel.kallsyms]_stext'))).toBe(true);
    expect(Buffer.from(raw).indexOf(Buffer.from('_stext')) ).toBe(Buffer.from(raw).indexOf(Buffer.from('[kernel.kallsyms]_stext')) + 17);
  });
});
