/**
 * Real producers: `node --cpu-prof` and `node --heap-prof` on programs made here, read through a
 * registry (detection, validation), checked against the raw JSON they wrote, and written back.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findSampleType, type Profile } from '@profkit/core';
import { createRegistry } from '@profkit/core/node';
import v8Adapter from '../src/index.js';
import type { V8CpuProfile, V8HeapProfile, V8HeapProfileNode } from '../src/index.js';
import { expectValid } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'profkit-v8-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const registry = createRegistry([v8Adapter]);

function only(ext: string, sub: string): string {
  const f = readdirSync(join(dir, sub)).filter((x) => x.endsWith(ext));
  expect(f).toHaveLength(1);
  return join(dir, sub, f[0]!);
}

/** Self values of type `t` per function name (the leaf frame of each sample). */
function selfByFunction(p: Profile, t: number): Map<string, bigint> {
  const fnRow = new Map(Array.from(p.functions.function_id, (id, r) => [id, r]));
  const locRow = new Map(Array.from(p.locations.location_id, (id, r) => [id, r]));
  const out = new Map<string, bigint>();
  const { offsets, location_id } = p.samples.locations;
  for (let i = 0; i < p.samples.value.length; i++) {
    const name = offsets[i] === offsets[i + 1] ? '<empty>' : p.functions.name[fnRow.get(p.locations.function_id[locRow.get(location_id[offsets[i]!]!)!]!)!]!;
    out.set(name, (out.get(name) ?? 0n) + p.samples['.values'][t]![i]!);
  }
  return out;
}

describe('node --cpu-prof', () => {
  const script = join(dir, 'busy.js');
  // `spin` is declared on line 2 (1-based), `outer` on line 6. It spins for 300 ms of its CPU
  // time, not of wall time, which a loaded machine may give it little of (few or no samples).
  writeFileSync(
    script,
    ['"use strict";', 'function spin(n) {', '  let s = 0;', '  for (let i = 0; i < n; i++) s += Math.sqrt(i);', '  return s; }', 'function outer() {', '  let t = 0;', '  const cpu0 = process.cpuUsage().user;', '  while (process.cpuUsage().user - cpu0 < 300_000) t += spin(20000);', '  return t; }', 'outer();', ''].join('\n'),
  );
  execFileSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', join(dir, 'cpu'), '--cpu-prof-interval', '500', script]);
  const file = only('.cpuprofile', 'cpu');
  const raw = JSON.parse(readFileSync(file, 'utf8')) as V8CpuProfile;

  it('is detected and read: spin and outer with their 1-based declaration lines in the script', async () => {
    const r = await registry.read(file);
    expect(r.format).toBe('v8-cpuprofile');
    expectValid(r.profile);
    const f = r.profile.functions;
    const url = pathToFileURL(script).href;
    const spin = f.name.indexOf('spin');
    const outer = f.name.indexOf('outer');
    expect([f.filename[spin], f.start_line[spin]]).toEqual([url, 2]);
    expect([f.filename[outer], f.start_line[outer]]).toEqual([url, 6]);
  });

  it('totals match the raw JSON: samples per function, all the time from the first sample to endTime', async () => {
    const { profile } = await registry.read(file);
    const count = findSampleType(profile, 'samples');
    const cpu = findSampleType(profile, 'cpu');
    expect(profile.samples.value.length).toBe(raw.samples.length);
    const nameOfNode = new Map(raw.nodes.map((n) => [n.id, n.callFrame.functionName || '(anonymous)']));
    const rawCounts = new Map<string, bigint>();
    for (const id of raw.samples) {
      const name = nameOfNode.get(id) === '(root)' ? '<empty>' : nameOfNode.get(id)!;
      rawCounts.set(name, (rawCounts.get(name) ?? 0n) + 1n);
    }
    expect(selfByFunction(profile, count)).toEqual(rawCounts);
    expect(rawCounts.get('spin')! > 0n).toBe(true);
    const first = raw.startTime + raw.timeDeltas[0]!;
    const totalNs = profile.samples['.values'][cpu]!.reduce((a, b) => a + b, 0n);
    expect(totalNs).toBe(BigInt(Math.round((Math.max(raw.endTime, raw.timeDeltas.reduce((a, b) => a + b, raw.startTime)) - first) * 1000)));
  });

  it('written back: the same sample sequence (by function), time deltas and positionTicks totals', async () => {
    const { profile } = await registry.read(file);
    const out = join(dir, 'back.cpuprofile');
    await registry.write(profile, out);
    const back = JSON.parse(readFileSync(out, 'utf8')) as V8CpuProfile;
    const names = (p: V8CpuProfile) => {
      const m = new Map(p.nodes.map((n) => [n.id, n.callFrame.functionName]));
      return p.samples.map((id) => m.get(id));
    };
    expect(names(back)).toEqual(names(raw));
    expect(back.timeDeltas).toEqual(raw.timeDeltas);
    expect([back.startTime, back.endTime]).toEqual([raw.startTime, raw.endTime]);
    const ticks = (p: V8CpuProfile, name: string) => p.nodes.filter((n) => n.callFrame.functionName === name).flatMap((n) => n.positionTicks ?? []).reduce((a, t) => a + t.ticks, 0);
    expect(ticks(back, 'spin')).toBe(ticks(raw, 'spin'));
    expect(ticks(raw, 'spin')).toBeGreaterThan(0);
  });
});

function findNode(n: V8HeapProfileNode, name: string): V8HeapProfileNode | undefined {
  const todo = [n];
  while (todo.length) {
    const x = todo.pop()!;
    if (x.callFrame.functionName === name) return x;
    todo.push(...x.children);
  }
  return undefined;
}

describe('node --heap-prof', () => {
  const script = join(dir, 'alloc.js');
  // `allocate` is declared on line 2; what it allocates stays alive in `kept`.
  writeFileSync(
    script,
    ['const kept = [];', 'function allocate(n) {', '  for (let i = 0; i < n; i++) kept.push({ i, s: "x".repeat(64) + i });', '}', 'allocate(200000);', 'globalThis.kept = kept;', ''].join('\n'),
  );
  execFileSync(process.execPath, ['--heap-prof', '--heap-prof-dir', join(dir, 'heap'), '--heap-prof-interval', '4096', script]);
  const file = only('.heapprofile', 'heap');
  const raw = JSON.parse(readFileSync(file, 'utf8')) as V8HeapProfile;

  /** Sum of the samples' sizes by whether their node is in the tree, and the tree's selfSize sum. */
  function rawTotals() {
    const ids = new Set<number>();
    let selfSizes = 0;
    const todo: V8HeapProfileNode[] = [raw.head];
    while (todo.length) {
      const n = todo.pop()!;
      ids.add(n.id);
      selfSizes += n.selfSize;
      todo.push(...n.children);
    }
    const placed = raw.samples.filter((s) => ids.has(s.nodeId));
    return { placed: placed.length, placedBytes: placed.reduce((a, s) => a + s.size, 0), orphans: raw.samples.length - placed.length, selfSizes };
  }

  it('is detected and read; sizes and counts match the raw samples (those naming a node); allocate at line 2', async () => {
    const r = await registry.read(file);
    expect(r.format).toBe('v8-heapprofile');
    expectValid(r.profile);
    const space = findSampleType(r.profile, 'space');
    const t = rawTotals();
    expect(raw.samples.length).toBeGreaterThan(10);
    expect(r.profile.samples.value.length).toBe(t.placed);
    expect(r.profile.samples['.values'][space]!.reduce((a, b) => a + b, 0n)).toBe(BigInt(t.placedBytes));
    expect(r.warnings.some((w) => w.code === 'PROFKIT_W_V8_ORPHAN_SAMPLES')).toBe(t.orphans > 0);
    // Node 20 writes the user script's frames of a --heap-prof profile without url and position
    // (url "", lineNumber -1): the expected values come from the raw node, converted.
    const f = r.profile.functions;
    const i = f.name.indexOf('allocate');
    const rawAllocate = findNode(raw.head, 'allocate')!.callFrame;
    expect([rawAllocate.url, rawAllocate.lineNumber]).toEqual(rawAllocate.url ? [pathToFileURL(script).href, 1] : ['', -1]);
    expect([f.filename[i], f.start_line[i]]).toEqual([rawAllocate.url, rawAllocate.lineNumber + 1]);
    expect(selfByFunction(r.profile, space).get('allocate')! > 0n).toBe(true);
  });

  it('read option selfSize: the tree\'s selfSize totals (what DevTools shows)', async () => {
    const r = await registry.read(file, { options: { selfSize: 'true' } });
    const space = findSampleType(r.profile, 'space');
    expect(r.profile.samples['.values'][space]!.reduce((a, b) => a + b, 0n)).toBe(BigInt(rawTotals().selfSizes));
  });

  it('written back: the same samples (size, ordinal, function)', async () => {
    const { profile } = await registry.read(file);
    const out = join(dir, 'back.heapprofile');
    await registry.write(profile, out);
    const back = JSON.parse(readFileSync(out, 'utf8')) as V8HeapProfile;
    const rows = (p: V8HeapProfile) => {
      const name = new Map<number, string>();
      const todo = [p.head];
      while (todo.length) {
        const n = todo.pop()!;
        name.set(n.id, n.callFrame.functionName);
        todo.push(...n.children);
      }
      return p.samples.filter((s) => name.has(s.nodeId)).map((s) => `${s.size}:${s.ordinal}:${name.get(s.nodeId)}`);
    };
    expect(rows(back)).toEqual(rows(raw));
    expect(back.samples.length).toBe(rawTotals().placed);
  });
});
