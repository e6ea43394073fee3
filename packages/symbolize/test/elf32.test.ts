/**
 * A real 32-bit ELF (gcc -m32, without libc so no 32-bit libc is needed): the reader against
 * readelf, and symbolization with both tools against the source's MARK lines.
 */

import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, resolveStack } from '@profkit/core/node';
import { ET_EXEC, PT_LOAD, readElf, symbolize } from '../src/index.js';
import { C_DIR, addr2lineOracle, execMapping, haveTool, loadSegments, markers, nmSymbols, readelfBuildId, tmp, which } from './helpers.js';

const SRC = join(C_DIR, 'bare32.c');
const work = tmp();
const bin = join(work, 'bare32');
const built =
  haveTool('gcc', 'gcc') &&
  haveTool('readelf', 'binutils') &&
  spawnSync('gcc', ['-m32', '-g', '-O1', '-nostdlib', '-static', '-fno-pie', '-no-pie', '-o', bin, SRC], { encoding: 'utf8' }).status === 0;
if (!built) console.warn('skipping 32-bit ELF tests: gcc -m32 cannot build a static 32-bit program here (apt-get install -y gcc-multilib)');
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.skipIf(!built)('32-bit ELF', () => {
  it('reads class, type, segments and build id like readelf', () => {
    const e = readElf(bin);
    expect(e.bits).toBe(32);
    expect(e.littleEndian).toBe(true);
    expect(e.type).toBe(ET_EXEC);
    expect(e.buildId).toBe(readelfBuildId(bin));
    expect(e.programs.filter((p) => p.type === PT_LOAD).map((p) => ({ offset: p.offset, vaddr: p.vaddr, filesz: p.filesz, memsz: p.memsz }))).toEqual(
      loadSegments(bin).map(({ flags: _f, ...s }) => s),
    );
  });

  for (const tool of ['addr2line', 'llvm-symbolizer'] as const) {
    it.skipIf(!which(tool))(`symbolizes with ${tool}`, async () => {
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
      const m = execMapping(bin, 0n);
      const mid = b.internMapping({ memoryStart: m.start, memoryLimit: m.limit, fileOffset: m.offset, filename: bin, buildId: readelfBuildId(bin) });
      const a = nmSymbols(bin).get('work32')!.addr;
      b.addSample([b.internLocation({ address: a, mappingId: mid })], [1]);
      const { profile, reports } = await symbolize(b.build(), { tool, searchPath: [] });
      expect(reports[0]!.status).toBe('symbolized');
      const f = resolveStack(profile, 0)[0]!;
      expect([f.name, f.filename, f.line]).toEqual(['work32', SRC, markers(SRC).get('work32')]);
      expect(f.line).toBe(addr2lineOracle(bin, a)[0]!.line);
    });
  }
});
