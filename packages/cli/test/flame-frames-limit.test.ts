/**
 * `profkit flame --limit maxFlameFrames=N`: a profile asking for more frames than N (one stack of
 * a many-line location repeated: every entry draws all of its inline lines) stops with
 * PROFKIT_E_LIMIT naming the option and writes no output; at N it draws.
 */

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../src/exit-codes.js';
import { repeatedInlineLocationProfile } from './many-inline-lines.js';
import { profkit } from './views-helpers.js';

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
