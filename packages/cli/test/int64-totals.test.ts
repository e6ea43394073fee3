/**
 * Heap samples near int64 max (issue 15 item 10): `go tool pprof` wraps the total (-7194B);
 * profkit's views print and report the exact sums, and the commands that write a profile refuse
 * a sum beyond int64 with PROFKIT_E_RANGE (exit 1) instead of writing a wrapped value.
 */

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileBuilder } from '@profkit/core/node';
import { loadRegistry } from '../src/config.js';
import { parseTop, profkit, repoRoot } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-int64-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const BIG = (1n << 63n) - 1n - 4096n;
const file = join(tmp, 'big.pb.gz');

beforeAll(async () => {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'inuse_space', unit: 'bytes' }], facts: { period: 1n } });
  const loc = (n: string) => b.internLocation({ functionId: b.internFunction({ name: n }), line: 1 });
  const main = loc('main');
  b.addSample([loc('a'), main], [BIG]);
  b.addSample([loc('b'), main], [BIG]);
  b.addSample([loc('c'), main], [1000n]);
  const { registry } = await loadRegistry({ cwd: repoRoot, adapters: ['@profkit/pprof'], discover: false });
  await registry.write(b.build(), file);
});

describe('sums beyond int64', () => {
  it('top, info and folded show the exact sums (no wrapped negative total)', async () => {
    const j = JSON.parse((await profkit(['top', file, '--json'])).stdout);
    expect(BigInt(j.total)).toBe(2n * BIG + 1000n);
    const text = await profkit(['top', file]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('of 16384PB total');
    expect(parseTop(text.stdout).rows.every((r) => !r.flat.startsWith('-') && !r.cum.startsWith('-'))).toBe(true);
    const info = JSON.parse((await profkit(['info', file, '--json'])).stdout);
    expect(JSON.stringify(info)).toContain(String(2n * BIG + 1000n));
    expect((await profkit(['folded', file])).stdout).toContain(`main;a ${BIG}\n`);
  });

  it('merge refuses a sum beyond int64 (PROFKIT_E_RANGE, exit 1) and writes nothing', async () => {
    const out = join(tmp, 'merged.pb.gz');
    const r = await profkit(['merge', file, file, '-o', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('PROFKIT_E_RANGE');
    expect(r.stderr).toContain('inuse_space/bytes');
    expect(existsSync(out)).toBe(false);
  });

  it('diff of the profile with itself: no nonzero entry (the base is negated exactly)', async () => {
    const r = await profkit(['diff', file, file, '--node-fraction', '0']);
    expect(r.code, r.stderr).toBe(0);
    // pprof shows -1B for a and b here (its Scale(-1) goes through a double)
    expect(parseTop(r.stdout).rows.filter((row) => row.flat !== '0' || row.cum !== '0')).toEqual([]);
  });
});
