/** Detection of the legacy binary CPU profile header (shared by sniff and the parser). */

export type WordFormat = { size: 4 | 8; littleEndian: boolean };

/** The order google/pprof tries: 32-bit LE, 32-bit BE, 64-bit LE, 64-bit BE. */
export const WORD_FORMATS: readonly WordFormat[] = [
  { size: 4, littleEndian: true },
  { size: 4, littleEndian: false },
  { size: 8, littleEndian: true },
  { size: 8, littleEndian: false },
];

export function readWord(view: DataView, off: number, f: WordFormat): bigint {
  return f.size === 4 ? BigInt(view.getUint32(off, f.littleEndian)) : view.getBigUint64(off, f.littleEndian);
}

export interface CpuHeader {
  word: WordFormat;
  java: boolean;
  periodMicros: bigint;
}

/** Detects the header; `undefined` if the bytes are not a legacy CPU profile. */
export function detectCpuHeader(bytes: Uint8Array): CpuHeader | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const f of WORD_FORMATS) {
    if (bytes.length < 5 * f.size) continue;
    const n = [0, 1, 2, 3, 4].map((i) => readWord(view, i * f.size, f));
    if (n[0] === 0n && n[1] === 3n && n[4] === 0n && n[3]! > 0n && (n[2] === 0n || n[2] === 1n)) {
      return { word: f, java: n[2] === 1n, periodMicros: n[3]! };
    }
  }
  return undefined;
}

