/**
 * The tool processes: protocol parsers, and misbehaving tools (hang, crash, garbage) — each ends
 * as a per-mapping report or a fallback, within the timeout, and no process is left running.
 */

import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, resolveStack } from '@profkit/core/node';
import { parseAddr2LineFrame, parseLlvmJson, symbolize } from '../src/index.js';
import { C_DIR, compile, execMapping, haveTool, nmSymbols, tmp } from './helpers.js';

describe('reply parsers', () => {
  it('llvm-symbolizer JSON: frames innermost first; unknown symbols dropped; errors thrown', () => {
    const line = JSON.stringify({
      Address: '0x1239',
      ModuleName: 'busy',
      Symbol: [
        { Column: 12, FileName: '/src/a.c', FunctionName: 'inl', Line: 11, StartLine: 8 },
        { Column: 10, FileName: '/src/a.c', FunctionName: 'outer', Line: 23, StartLine: 20 },
      ],
    });
    expect(parseLlvmJson(line)).toEqual([
      { func: 'inl', file: '/src/a.c', line: 11, column: 12, startLine: 8 },
      { func: 'outer', file: '/src/a.c', line: 23, column: 10, startLine: 20 },
    ]);
    expect(parseLlvmJson('{"Address":"0x1","Symbol":[{"FunctionName":"??","FileName":"??","Line":0}]}')).toEqual([]);
    expect(() => parseLlvmJson('{"Error":{"Message":"No such file"}}')).toThrow(/No such file/);
    expect(() => parseLlvmJson('not json')).toThrow(/not JSON/);
  });
  it('addr2line pairs: ??, ??:0, ??:?, discriminators, colons in paths', () => {
    expect(parseAddr2LineFrame('f', '/a/b.c:12 (discriminator 3)')).toEqual({ func: 'f', file: '/a/b.c', line: 12, column: 0, startLine: 0 });
    expect(parseAddr2LineFrame('??', '??:0')).toBeUndefined();
    expect(parseAddr2LineFrame('_start', '??:?')).toEqual({ func: '_start', file: '', line: 0, column: 0, startLine: 0 });
    expect(parseAddr2LineFrame('g', 'C:/x/y.c:7')).toEqual({ func: 'g', file: 'C:/x/y.c', line: 7, column: 0, startLine: 0 });
  });
});

const haveGcc = haveTool('gcc', 'gcc') && haveTool('addr2line', 'binutils');

describe.skipIf(!haveGcc)('misbehaving tools', () => {
  let work = '';
  let bin = '';
  beforeAll(() => {
    work = tmp();
    bin = join(work, 'prog');
    compile('gcc', ['-g', '-O2', '-fno-pie', '-no-pie', '-o', bin, join(C_DIR, 'prog.c')]);
  });
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  function script(name: string, body: string): string {
    const p = join(work, name);
    writeFileSync(p, `#!/bin/sh\necho $$ > ${p}.pid\n${body}\n`);
    chmodSync(p, 0o755);
    return p;
  }
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  /**
   * Polls until `done` holds, for at most 30 s (a bound against hangs only: the states waited for
   * come as soon as the processes involved get to run, which a loaded machine delays).
   */
  async function until(done: () => boolean, what: string): Promise<void> {
    const end = Date.now() + 30_000;
    while (!done()) {
      if (Date.now() > end) throw new Error(`${what} (waited 30 s)`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  /** The pid a script() tool wrote once it started, or NaN before. */
  const pidOf = (tool: string) => {
    try {
      return Number(readFileSync(tool + '.pid', 'utf8').trim() || NaN);
    } catch {
      return NaN;
    }
  };
  function profile() {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const m = execMapping(bin, 0n);
    const mid = b.internMapping({ memoryStart: m.start, memoryLimit: m.limit, fileOffset: m.offset, filename: bin });
    b.addSample([b.internLocation({ address: nmSymbols(bin).get('leaf_fn')!.addr + 4n, mappingId: mid })], [1]);
    return b.build();
  }

  it('a tool that never answers times out: tool-failed, process killed', async () => {
    const hang = script('hang', 'exec sleep 1000');
    const { reports, profile: out } = await symbolize(profile(), { tool: 'llvm-symbolizer', tools: { llvmSymbolizer: hang }, timeoutMs: 400, searchPath: [] });
    // The 400 ms timeout ended it (the message names it), not the tool's 1,000 s.
    expect(reports[0]!.status).toBe('tool-failed');
    expect(reports[0]!.message).toMatch(/did not answer within 400 ms/);
    expect(out.locations.function_id[0]).toBe(0);
    const pid = pidOf(hang);
    expect(pid).toBeGreaterThan(0);
    // Killed: gone once reaped (not within a fixed 100 ms); a tool left running fails after 30 s.
    await until(() => !alive(pid), `the hanging tool (pid ${pid}) was not killed`);
  });

  it('a tool that exits at once: tool-failed naming its status and stderr', async () => {
    const die = script('die', 'echo "boom: cannot start" >&2; exit 3');
    const { reports } = await symbolize(profile(), { tool: 'addr2line', tools: { addr2line: die }, timeoutMs: 5000, searchPath: [] });
    expect(reports[0]!.status).toBe('tool-failed');
    expect(reports[0]!.message).toMatch(/exited with status 3: boom: cannot start/);
  });

  it('a tool that is not installed: tool-failed with an install hint', async () => {
    const { reports } = await symbolize(profile(), { tool: 'llvm-symbolizer', tools: { llvmSymbolizer: join(work, 'nope') }, searchPath: [] });
    expect(reports[0]!.status).toBe('tool-failed');
    expect(reports[0]!.message).toMatch(/llvm-symbolizer was not found/);
  });

  it('an llvm-symbolizer that prints garbage: auto mode falls back to addr2line, with a warning', async () => {
    const junk = script('junk', 'while read l; do echo "this is not json"; done');
    const { reports, warnings, profile: out } = await symbolize(profile(), { tools: { llvmSymbolizer: junk }, timeoutMs: 5000, searchPath: [] });
    expect(reports[0]!.status).toBe('symbolized');
    expect(reports[0]!.tool).toBe('addr2line');
    expect(warnings.map((w) => w.code)).toContain('PROFKIT_W_SYMBOLIZE_FALLBACK');
    expect(resolveStack(out, 0)[0]!.name).toBe('leaf_fn');
  });

  it('an aborted signal stops symbolization with PROFKIT_E_TIMEOUT', async () => {
    const hang = script('hang2', 'exec sleep 1000');
    const ctl = new AbortController();
    // Aborted once the tool runs (not after 200 ms, when a loaded machine may not have started it).
    void until(() => pidOf(hang) > 0, 'the tool did not start').then(() => ctl.abort());
    await expect(symbolize(profile(), { tool: 'llvm-symbolizer', tools: { llvmSymbolizer: hang }, timeoutMs: 60_000, signal: ctl.signal, searchPath: [] })).rejects.toMatchObject({ code: 'PROFKIT_E_TIMEOUT' });
    const pid = pidOf(hang);
    expect(pid).toBeGreaterThan(0);
    await until(() => !alive(pid), `the tool (pid ${pid}) was not killed on abort`);
  });
});
