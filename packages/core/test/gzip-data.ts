/** Test data shared by the gzip tests. */
import { seededRandom } from '@profkit/test-utils';

/** Compressible but not trivially (varint-like bytes and repeated names, as in profile.proto). */
export function profileLike(n: number, seed: number): Uint8Array {
  const random = seededRandom(seed);
  const out = new Uint8Array(n);
  const words = Array.from({ length: 64 }, (_, i) => Buffer.from(`pkg${i}.(*Type${i % 7}).Method${i * 31}`));
  for (let at = 0; at < n; ) {
    if (random() < 0.5) {
      const w = words[Math.floor(random() * words.length)]!;
      out.set(w.subarray(0, Math.min(w.length, n - at)), at);
      at += w.length;
    } else {
      out[at++] = Math.floor(random() * 256);
    }
  }
  return out;
}
