/**
 * `profkit flame --limit maxFlameFrames=N`: a profile asking for more frames than N (one stack of
 * a many-line location repeated: every entry draws all of its inline lines) stops with
 * PROFKIT_E_LIMIT naming the option and writes no output; at N it draws.
 */

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { boundedFlameTree, defaultSampleTypeIndex, flameWalkBudget, type Profile } from '@profkit/core';
import { parsePprof } from '@profkit/pprof';
import { ExitCode } from '../src/exit-codes.js';
import { profkitInHeap, repeatedInlineLocationProfile } from './many-inline-lines.js';
import { fixture, fixturesDir, hasFixtures, profkit } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-flame-frames-limit-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('flame: --limit maxFlameFrames', () => {
  // 1 + 30 × 50 frames.
  const file = join(tmp, 'repeated.pb.gz');
  writeFileSync(file, repeatedInlineLocationProfile(30, 50));

  for (const format of ['html', 'svg']) {
    it(`${format}: one frame past the limit is PROFKIT_E_LIMIT naming maxFlameFrames, no output written`, async () => {
      const out = join(tmp, `over.${format}`);
      const r = await profkit(['flame', file, '-o', out, '--limit', 'maxFlameFrames=1500']);
      expect(r.code).toBe(ExitCode.INVALID);
      expect(r.stderr).toMatch(/PROFKIT_E_LIMIT/);
      expect(r.stderr).toMatch(/maxFlameFrames/);
      expect(r.stderr).toMatch(/1500/);
      expect(existsSync(out)).toBe(false);
    });

    it(`${format}: a profile of exactly the limit draws every frame`, async () => {
      const out = join(tmp, `at.${format}`);
      const r = await profkit(['flame', file, '-o', out, '--quiet', '--limit', 'maxFlameFrames=1501']);
      expect(r.code, r.stderr).toBe(0);
      const text = readFileSync(out, 'utf8');
      if (format === 'svg') expect(text.match(/<g class="frame"/g)?.length).toBe(1501);
      else expect(JSON.parse(/<script type="application\/json" id="flame-data">(.*)<\/script>/.exec(text)![1]!).frames.length / 4).toBe(1501);
    });
  }
});

describe('flame: --limit maxFlameDepth', () => {
  // 1 + 30 × 50 levels, one chain.
  const file = join(tmp, 'deep.pb.gz');
  writeFileSync(file, repeatedInlineLocationProfile(30, 50));

  for (const format of ['html', 'svg']) {
    it(`${format}: one level past the limit is PROFKIT_E_LIMIT naming maxFlameDepth, no output written; at the limit it draws`, async () => {
      const out = join(tmp, `deep-over.${format}`);
      const r = await profkit(['flame', file, '-o', out, '--limit', 'maxFlameDepth=1500']);
      expect(r.code).toBe(ExitCode.INVALID);
      expect(r.stderr).toMatch(/PROFKIT_E_LIMIT/);
      expect(r.stderr).toMatch(/limits\.maxFlameDepth/);
      expect(existsSync(out)).toBe(false);
      const at = await profkit(['flame', file, '-o', out, '--quiet', '--limit', 'maxFlameDepth=1501']);
      expect(at.code, at.stderr).toBe(0);
      expect(existsSync(out)).toBe(true);
    });
  }

  it('refuses by default the 2M-level chain of a 7.5 KB pprof (1,000 entries of a 2,000-line location; a 437 MB SVG before)', async () => {
    const crafted = join(tmp, 'chain.pb.gz');
    writeFileSync(crafted, repeatedInlineLocationProfile(1_000, 2_000));
    const out = join(tmp, 'chain.svg');
    const r = await profkit(['flame', crafted, '-o', out]);
    expect(r.code).toBe(ExitCode.INVALID);
    expect(r.stderr).toMatch(/PROFKIT_E_LIMIT/);
    expect(r.stderr).toMatch(/limits\.maxFlameDepth/);
    expect(existsSync(out)).toBe(false);
  });
});

describe('flame -o -: a limit met while the SVG is written', () => {
  it('says on stderr, before the typed error, that what standard output holds is incomplete; exit code 1', () => {
    // 16,001 frames of one chain: an SVG of about 3.5 MB, written 16,384 lines (4,096 frames) a chunk.
    const file = join(tmp, 'partial.pb.gz');
    writeFileSync(file, repeatedInlineLocationProfile(8, 2_000));
    const r = profkitInHeap(256, ['flame', file, '-o', '-', '--format', 'svg', '--limit', 'maxReportBytes=1000000']);
    expect(r.code).toBe(ExitCode.INVALID);
    expect(r.stdout.length).toBeGreaterThan(0);
    expect(r.stdout).not.toContain('</svg>');
    const note = /profkit: flame: the (\d+) bytes of svg written to standard output are incomplete/.exec(r.stderr);
    expect(note, r.stderr).not.toBeNull();
    expect(Number(note![1])).toBe(Buffer.byteLength(r.stdout));
    expect(r.stderr.indexOf('incomplete')).toBeLessThan(r.stderr.indexOf('PROFKIT_E_LIMIT'));
    expect(r.stderr).toMatch(/maxReportBytes/);
  });
});

describe('flame: the count of frames left out on a real profile', () => {
  it.skipIf(!hasFixtures)("is exact, within the count budget (pprof's large.cpu: 499,787 stack entries, 425,052 frames; no 'at least')", async () => {
    const large = fixture('pprof/internal/proftest/testdata/large.cpu');
    const p = parsePprof(readFileSync(large)).profile;
    for (const [minWidth, percent] of [
      ['0.0001', '0.01'],
      ['0.01', '1'],
    ] as const) {
      // The drawing's count (cutFlameTree) against core's other exact count, boundedFlameTree.
      const counted = boundedFlameTree(p, defaultSampleTypeIndex(p), Number(minWidth));
      expect(counted.frames).toBe(425_052);
      expect(counted.elided).toBeGreaterThan(0);
      const subtitle = `; ${counted.elided} of ${counted.frames} frames narrower than ${percent}% of the total left out`;
      const out = join(tmp, `large-${minWidth}.html`);
      const r = await profkit(['flame', large, '-o', out, '--quiet', '--min-width', minWidth]);
      expect(r.code, r.stderr).toBe(0);
      const page = readFileSync(out, 'utf8');
      expect(page).toContain(subtitle);
      expect(page).not.toContain('at least');
    }
  });
});

describe('flame: --limit maxFlameWalkSteps', () => {
  // One sample: the root, then a step per entry (each entry's 50 inline frames are drawn at once).
  const file = join(tmp, 'walk.pb.gz');
  writeFileSync(file, repeatedInlineLocationProfile(30, 50));

  it('a walk past the limit is PROFKIT_E_LIMIT naming maxFlameWalkSteps, no output written; the default draws', async () => {
    const out = join(tmp, 'walk.svg');
    const r = await profkit(['flame', file, '-o', out, '--limit', 'maxFlameWalkSteps=10']);
    expect(r.code).toBe(ExitCode.INVALID);
    expect(r.stderr).toMatch(/PROFKIT_E_LIMIT/);
    expect(r.stderr).toMatch(/limits\.maxFlameWalkSteps/);
    expect(existsSync(out)).toBe(false);
    const drawn = await profkit(['flame', file, '-o', out, '--quiet']);
    expect(drawn.code, drawn.stderr).toBe(0);
    expect(readFileSync(out, 'utf8').match(/<g class="frame"/g)?.length).toBe(1 + 30 * 50);
  });
});

describe('flame: the walk of real profiles', () => {
  /** The shared fixtures the pprof codec reads (others are legacy text formats), by path. */
  function pprofFixtures(): [string, Profile][] {
    const out: [string, Profile][] = [];
    for (const rel of readdirSync(fixturesDir, { recursive: true, encoding: 'utf8' }).sort()) {
      const path = join(fixturesDir, rel);
      if (!statSync(path).isFile()) continue;
      try {
        out.push([rel, parsePprof(readFileSync(path)).profile]);
      } catch {
        // Not a pprof profile.
      }
    }
    return out;
  }

  it.skipIf(!hasFixtures)('takes at most a tenth of the default maxFlameWalkSteps: every pprof fixture (large.cpu: 499,787 entries, its 425,052 frames with --min-width 0), flame and boundedFlameTree', async () => {
    const fixtures = pprofFixtures();
    expect(fixtures.map(([rel]) => rel)).toContain('pprof/internal/proftest/testdata/large.cpu');
    // Files the codec refuses are skipped as not pprof: a codec refusing real ones would shrink this.
    expect(fixtures.length).toBeGreaterThanOrEqual(5);
    for (const [rel, p] of fixtures) {
      const tenth = Math.floor(flameWalkBudget(p) / 10);
      for (const minWidth of ['0.0001', '0']) {
        const out = join(tmp, 'real.html');
        const r = await profkit(['flame', fixture(rel), '-o', out, '--quiet', '--min-width', minWidth, '--limit', `maxFlameWalkSteps=${tenth}`]);
        expect(r.code, `${rel} --min-width ${minWidth}: ${r.stderr}`).toBe(0);
        const tree = boundedFlameTree(p, defaultSampleTypeIndex(p), Number(minWidth), { limits: { maxFlameWalkSteps: tenth } });
        expect(tree.walkSteps, rel).toBeLessThanOrEqual(tenth);
      }
    }
  }, 120_000);
});
