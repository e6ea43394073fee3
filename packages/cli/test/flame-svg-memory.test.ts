/**
 * `flame -o X.svg` writes the SVG as it is drawn (`renderFlameGraphChunks`), one chunk of 16,384
 * lines at a time: a crafted 3 KB profile of 500,000 full-width frames draws a 109 MB SVG. Held
 * as one string (before), that text, its chunks and its UTF-8 copy passed a 64 MB heap (the
 * 2M-frame graph of 1,000 × 2,000 lines: 437 MB of SVG at 1.9 GB RSS; streamed, 215 MB).
 */

import { createReadStream, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { haveCli } from '@profkit/test-utils';
import { profkitInHeap, repeatedInlineLocationProfile } from './many-inline-lines.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-flame-svg-memory-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.skipIf(!haveCli('flame SVG memory tests'))('flame SVG of 500,000 frames in a 64 MB heap', () => {
  it('writes every frame of the SVG', async () => {
    const file = join(tmp, 'repeated.pb.gz');
    const image = join(tmp, 'repeated.svg');
    writeFileSync(file, repeatedInlineLocationProfile(250, 2000));
    // 500,001 levels: past the default maxFlameDepth (65,536), raised to test the memory.
    const r = profkitInHeap(64, ['flame', file, '-o', image, '--quiet', '--limit', 'maxFlameDepth=600000']);
    expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
    // Read a line at a time: the file is 109 MB.
    let frames = 0;
    let lastFrame = '';
    let lastLine = '';
    for await (const line of createInterface({ input: createReadStream(image, 'utf8'), crlfDelay: Infinity })) {
      if (line.startsWith('<g class="frame"')) {
        frames++;
        lastFrame = line;
      }
      lastLine = line;
    }
    // The root and 250 × 2,000 inline frames, one chain, all as wide as the root.
    expect(frames).toBe(1 + 250 * 2000);
    // The innermost frame: the location's first line (f0), drawn last (depth first).
    expect(lastFrame).toMatch(/^<g class="frame" data-name="f0" data-value="1">/);
    expect(lastLine).toBe('</svg>');
  }, 120_000);

  it('leaves no file when maxReportBytes is met while the SVG is written', () => {
    const file = join(tmp, 'repeated-limit.pb.gz');
    const dir = join(tmp, 'limit-out');
    mkdirSync(dir);
    writeFileSync(file, repeatedInlineLocationProfile(250, 2000));
    // 109 MB of SVG: the limit is met after a few chunks were written to the temporary file.
    const r = profkitInHeap(64, ['flame', file, '-o', join(dir, 'x.svg'), '--limit', 'maxFlameDepth=600000', '--limit', 'maxReportBytes=10000000']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('PROFKIT_E_LIMIT');
    expect(r.stderr).toContain('maxReportBytes');
    expect(readdirSync(dir)).toEqual([]);
  }, 120_000);
});
