/** The portable SHA-256 behind FIDL method ordinals (issue 16: no node:crypto in the main entry). */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../src/fidl/sha256.js';
import { ORDINALS, methodOrdinal } from '../src/index.js';

describe('sha256', () => {
  it('equals node:crypto for every padding case (0, 55, 56, 63, 64, 65 and 1000 bytes)', () => {
    for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000]) {
      const data = new Uint8Array(n).map((_, i) => (i * 31 + n) & 0xff);
      expect(Buffer.from(sha256(data)).toString('hex')).toBe(createHash('sha256').update(data).digest('hex'));
    }
  });

  it('gives the method ordinals FIDL derives with SHA-256', () => {
    for (const [method, ordinal] of Object.entries(ORDINALS)) {
      const h = createHash('sha256').update(`fuchsia.memory.sampler/Sampler.${method}`).digest();
      expect(ordinal).toBe(h.readBigUInt64LE(0) & 0x7fff_ffff_ffff_ffffn);
      expect(methodOrdinal(`fuchsia.memory.sampler/Sampler.${method}`)).toBe(ordinal);
    }
  });
});
